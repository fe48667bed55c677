"""Run-event hooks that mirror ``metrics.jsonl`` to TensorBoard, trackio or wandb.

Chosen with ``logging.backends`` in the config (docs/config.md); each library is imported only when
it is chosen, and a missing one stops the run at its start with the extra to install. A resumed run
continues the same TensorBoard log (events from iterations after the checkpoint are purged) and the
same wandb / trackio run.
"""

from __future__ import annotations

from typing import Any

from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl

#: backend name -> (module to import, extra that installs it)
EXTRAS: dict[str, tuple[str, str]] = {
    "tensorboard": ("tensorboard", "tensorboard"),
    "trackio": ("trackio", "trackio"),
    "wandb": ("wandb", "wandb"),
}

_ACTIVE: dict[str, list[Any]] = {}


def flatten(metrics: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Numeric leaves of nested metrics as ``a/b`` names (booleans as 0/1; text left out)."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "/"))
        elif isinstance(value, bool):
            out[name] = float(value)
        elif isinstance(value, (int, float)):
            out[name] = float(value)
    return out


def _require(backend: str) -> None:
    import importlib.util

    module, extra = EXTRAS[backend]
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"logging.backends: {backend!r} needs the {module} package; install it "
                          f"with pip install 'spade-rl[{extra}]' or drop it from logging.backends")


@hookimpl
def spade_preflight(config: Any, report: Any) -> None:
    """Each of ``logging.backends`` must be installed (found, not imported)."""
    from spade_core.config.preflight import missing_package

    for backend in config.config.logging.backends:
        module, extra = EXTRAS[backend]
        problem = missing_package(module, extra, "logging.backends",
                                  f"the {backend!r} logging backend")
        if problem:
            key, _, message = problem.partition(": ")
            report(key, f"{message} (or drop {backend!r} from logging.backends)")


class TensorBoardSink:
    def __init__(self, run_info: Any, options: dict[str, Any]) -> None:
        from torch.utils.tensorboard import SummaryWriter

        folder = run_info.run_dir / options.get("dir", "tensorboard")
        resumed = run_info.extra.get("resumed_from")
        self.writer = SummaryWriter(log_dir=str(folder), purge_step=resumed)

    def log(self, iteration: int, values: dict[str, float]) -> None:
        for name, value in values.items():
            self.writer.add_scalar(name, value, global_step=iteration)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class TrackioSink:
    def __init__(self, run_info: Any, project: str, options: dict[str, Any]) -> None:
        import trackio

        self.trackio = trackio
        name = options.get("name") or run_info.run_dir.name
        trackio.init(project=project, name=name, config=run_info.config, resume="allow",
                     **{k: v for k, v in options.items() if k != "name"})

    def log(self, iteration: int, values: dict[str, float]) -> None:
        self.trackio.log(values, step=iteration)

    def close(self) -> None:
        self.trackio.finish()


class WandbSink:
    def __init__(self, run_info: Any, project: str, options: dict[str, Any]) -> None:
        import wandb

        settings = dict(options)
        run_id = settings.pop("id", None) or "spade-" + run_info.run_dir.resolve().name
        self.wandb_run = wandb.init(project=project,
                                    name=settings.pop("name", run_info.run_dir.name), id=run_id,
                                    resume="allow", dir=str(run_info.run_dir),
                                    config=run_info.config, **settings)

    def log(self, iteration: int, values: dict[str, float]) -> None:
        self.wandb_run.log(values, step=iteration)

    def close(self) -> None:
        self.wandb_run.finish()


def _sinks_for(run_info: Any) -> list[Any]:
    section = (run_info.config or {}).get("logging") or {}
    backends = section.get("backends") or []
    for backend in backends:
        _require(backend)
    options = section.get("options") or {}
    project = section.get("project", "spade-rl")
    sinks: list[Any] = []
    for backend in backends:
        mine = dict(options.get(backend) or {})
        if backend == "tensorboard":
            sinks.append(TensorBoardSink(run_info, mine))
        elif backend == "trackio":
            sinks.append(TrackioSink(run_info, project, mine))
        elif backend == "wandb":
            sinks.append(WandbSink(run_info, project, mine))
    return sinks


@hookimpl
def spade_run_start(run_info):
    _ACTIVE[str(run_info.run_dir)] = _sinks_for(run_info)


@hookimpl
def spade_iteration_end(run_info, iteration, metrics):
    sinks = _ACTIVE.get(str(run_info.run_dir), [])
    if sinks:
        values = flatten(metrics)
        for sink in sinks:
            sink.log(iteration, values)


@hookimpl
def spade_run_end(run_info, status, error):
    for sink in _ACTIVE.pop(str(run_info.run_dir), []):
        sink.close()

"""Fakes for the training tests: a trainer that counts its updates and checkpoints that count (slowly,
so that a SIGKILL can land inside a checkpoint), and a config on the fake self-play components with
the real ``faiss`` memory (hashing embedder, no model download). Never used outside tests.

Run as a script it is the child process of the SIGKILL test:
``python tests/fakes/training.py RUN_DIR ITERATIONS SCHEDULE [--resume] [--async]
[--weights-bytes=N] [--file-limit=BYTES] [--delay=SECONDS] [--report]``: ``--weights-bytes`` makes
the trainer's checkpoint hold a ``weights.bin`` of N bytes per update so far, ``--file-limit``
sets the process's file-size limit (``RLIMIT_FSIZE``, with SIGXFSZ ignored so that a write past
it fails with ``EFBIG`` as on a full disk), ``--report`` prints the run's messages on stderr.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

# The checkout first (its ``plugins`` and ``sandbox`` packages, not the test folders of the
# same names), then tests/ for ``fakes``.
sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin  # noqa: E402

from spade_core.hookspecs import hookimpl  # noqa: E402
from spade_core.interfaces import Trainer  # noqa: E402

TEXTS = [f"document number {i}" for i in range(9)]
POOL_PROGRAM = '''
class QAEnv:
    def reset(self, seed=None):
        return "Question: what is {q}?", {{}}

    def step(self, action):
        ok = action.strip() == "\\\\boxed{{42}}"
        return ("correct" if ok else "wrong"), (1.0 if ok else 0.0), True, False, {{}}

    def solution(self):
        return "\\\\boxed{{42}}"
'''


class FakeCountingTrainer(Trainer):
    """Counts updates and samples and keeps each designer sample it trained (environment,
    reward, the log-probs it was generated with: what a held design must keep through a resume);
    its checkpoint is two files written with a pause between. Its ``record_logprobs`` gives one
    made-up log-prob per character of the completion."""

    def __init__(self, delay: float = 0.0, weights_bytes: int = 0) -> None:
        self.delay = delay
        self.weights_bytes = weights_bytes
        self.updates = 0
        self.samples_seen = 0
        self.designs: list = []
        self.trained: list = []

    def train(self, samples):
        time.sleep(self.delay)
        self.updates += 1
        self.samples_seen += len(samples)
        self.designs += [[self.updates, s.group, round(s.reward, 6), s.meta.get("rollout_logps")]
                         for s in samples if s.role == "designer"]
        # asynchronous training: every sample trained, by id, with the version it was made with
        self.trained += [[self.updates, s.meta["sample_id"], s.meta.get("policy_version")]
                         for s in samples if "sample_id" in s.meta]
        return {"loss": 1.0 / self.updates, "agent_mean_reward": 0.5, "updates": self.updates}

    def record_logprobs(self, samples):
        return [[-len(s.messages[-1]["content"]) / 100.0] * 3 for s in samples]

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "updates.json").write_text(json.dumps({"updates": self.updates}))
        if self.weights_bytes:  # stand-in weights, growing with the updates
            (directory / "weights.bin").write_bytes(b"w" * (self.weights_bytes * self.updates))
        time.sleep(self.delay / 2)
        (directory / "samples.json").write_text(json.dumps({"samples": self.samples_seen,
                                                            "designs": self.designs,
                                                            "trained": self.trained}))

    def load(self, directory: Path) -> None:
        self.updates = json.loads((directory / "updates.json").read_text())["updates"]
        saved = json.loads((directory / "samples.json").read_text())
        self.samples_seen, self.designs = saved["samples"], saved["designs"]
        self.trained = saved.get("trained", [])


class FakeTrainingPlugin:
    def __init__(self, delay: float = 0.0, weights_bytes: int = 0) -> None:
        self.delay = delay
        self.weights_bytes = weights_bytes

    @hookimpl
    def register_trainers(self, register):
        register("fake-counting",
                 lambda o, c: FakeCountingTrainer(self.delay, self.weights_bytes))


def load_training_plugins(delay: float = 0.0, weights_bytes: int = 0):
    import envmemory.plugin as memory_plugin
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin
    from spade_core.testing import load_test_plugins

    loaded = load_test_plugins(FakeSelfPlayPlugin(texts=TEXTS),
                               FakeTrainingPlugin(delay, weights_bytes),
                               designer_plugin, estimators_plugin, trainers_plugin, memory_plugin)
    assert not [p.error for p in loaded.plugins if p.error]
    return loaded


def training_config(run_dir: Path, iterations: int, schedule: str = "frontier",
                    **sections) -> dict:
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"] = {"name": "t", "iterations": iterations, "dir": str(run_dir)}

    data["memory"] = {"plugin": "faiss", "options": {"embedder": "hashing",
                                                     "mastery_rollouts": 3,
                                                     "too_hard_rollouts": 3}}
    data["trainer"] = "fake-counting"
    data["checkpoint"] = {"every": 1, "keep": 2}
    data.update(sections)
    data["loop"] = dict(data["loop"])
    data["loop"].setdefault("schedule", schedule)
    return data


def memory_rows(run_dir: Path) -> list[tuple]:
    """Every memory record as (id, status, accumulated play counts, [(iteration, hinted,
    unhinted)]): replaying a lost iteration on an unrestored memory would count its plays twice."""
    from envmemory.store import RecordStore

    store = RecordStore(run_dir / "memory", readonly=True)
    try:
        counts = ("iterations", "rollouts_unhinted", "rollouts_hinted", "recent_unhinted_wins")
        return sorted((r.id, r.status, [r.stats.get(k) for k in counts],
                       [(h.iteration, h.hinted, h.unhinted) for h in r.history])
                      for r in store.records())
    finally:
        store.close()


def metrics_rows(run_dir: Path) -> list[dict]:
    """The rows of a run's ``metrics.jsonl``."""
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def run_in_process(run_dir: Path, iterations: int, resume: bool = False,
                   schedule: str = "frontier", **sections) -> Path:
    """A :func:`training_config` run in this process (``resume``: continue ``run_dir``)."""
    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run

    loaded = load_training_plugins()
    resolved = resolve_config(training_config(run_dir, iterations, schedule, **sections),
                              loaded.registry, "t.yaml")
    return run(resolved, loaded, report=lambda m: None, resume=run_dir if resume else None)


def main(argv: list[str]) -> int:
    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run

    run_dir, iterations, schedule = Path(argv[0]), int(argv[1]), argv[2]
    resume = "--resume" in argv
    flags = dict(a.removeprefix("--").split("=", 1) for a in argv if "=" in a)
    if "file-limit" in flags:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limit = int(flags["file-limit"])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    loaded = load_training_plugins(delay=float(flags.get("delay", 0.15)),
                                   weights_bytes=int(flags.get("weights-bytes", 0)))
    sections = {}
    if "--async" in argv:  # loop.async_level 1
        sections["loop"] = dict(FAKE_RUN_CONFIG["loop"], async_level=1)
    resolved = resolve_config(training_config(run_dir, iterations, schedule, **sections),
                              loaded.registry, "kill.yaml")

    def report(message: str) -> None:
        if "--report" in argv:
            print(message, file=sys.stderr, flush=True)

    from spade_core.errors import SpadeError

    try:
        run(resolved, loaded, report=report, resume=run_dir if resume else None)
    except SpadeError as exc:  # as the command line says it
        print(f"spade: error: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

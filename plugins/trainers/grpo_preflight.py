"""Checks of the ``grpo`` trainer before anything is built: its preflight (``spade config check``,
``spade run``), and what it needs of the installed TRL (also checked when it is built)."""

from __future__ import annotations

from typing import Any

from plugins.trainers.options import TRAINER_SET, GRPOOptions
from spade_core.errors import ConfigError

#: What this trainer uses of TRL beyond its documented ``GRPOTrainer(...)``/``GRPOConfig(...)``
#: constructors: methods and attributes of ``GRPOTrainer`` (private ones included) and
#: ``GRPOConfig`` fields. Checked before anything is built, so that a TRL release that moved one
#: fails with a clear message instead of deep inside the first update.
TRL_TRAINER_MEMBERS: tuple[str, ...] = (
    "compute_loss", "compute_loss_context_manager", "create_optimizer",
    "_get_per_token_logps_and_entropies")
TRL_CONFIG_FIELDS: tuple[str, ...] = (
    "epsilon", "epsilon_high", "beta", "loss_type", "temperature", "activation_checkpointing",
    "num_generations", "disable_dropout", "steps_per_generation", "use_cpu")
#: The TRL versions this trainer was tested with (docs/training.md, "Tested versions").
TESTED_TRL = "1.16"


def trl_problems() -> list[str]:
    """What the installed TRL lacks of what this trainer uses (empty when nothing)."""
    import dataclasses
    import importlib

    try:
        trl = importlib.import_module("trl")
        from trl import GRPOConfig, GRPOTrainer
    except ImportError as exc:
        return [f"trl cannot be imported ({exc})"]
    problems = [f"GRPOTrainer.{name}" for name in TRL_TRAINER_MEMBERS
                if not callable(inspect_member(GRPOTrainer, name))]
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    problems += [f"GRPOConfig.{name}" for name in TRL_CONFIG_FIELDS if name not in fields]
    try:
        from trl.trainer import utils
    except ImportError:
        utils = None
    if not callable(vars(utils).get("use_adapter") if utils is not None else None):
        problems.append("trl.trainer.utils.use_adapter")
    if problems:
        version = getattr(trl, "__version__", "unknown")
        return [f"the installed trl {version} lacks {', '.join(problems)}, which the grpo "
                f"trainer uses; install the tested version (pip install 'trl=={TESTED_TRL}.*', "
                "see docs/training.md, \"Tested versions\")"]
    return []


def inspect_member(owner: type, name: str) -> Any:
    """``owner.name`` looked up statically (no descriptor runs), or ``None``."""
    import inspect

    try:
        return inspect.getattr_static(owner, name)
    except AttributeError:
        return None


def require_trl(options: GRPOOptions) -> None:
    """Refuse to start (a ConfigError naming what is missing) when the installed TRL lacks what
    this trainer uses, or ``grpo_config`` names a field it does not have."""
    problems = trl_problems()
    if not problems:
        problems = grpo_config_problems(options.grpo_config)
    if problems:
        raise ConfigError("; ".join(problems))


def grpo_config_problems(grpo_config: dict[str, Any], where: str = "trainer.options") -> list[str]:
    """Problems with ``grpo_config``: fields the trainer sets itself and fields the installed
    ``trl.GRPOConfig`` does not have (imports trl, so only called when there are fields)."""
    if not grpo_config:
        return []
    import dataclasses
    import difflib

    from trl import GRPOConfig

    problems = []
    for key in sorted(grpo_config):
        if key in TRAINER_SET:
            hint = (f"set {where}.{key} instead" if key in GRPOOptions.model_fields
                    else "the trainer sets it itself")
            problems.append(f"{where}.grpo_config.{key}: not settable here; {hint}")
    fields = {f.name for f in dataclasses.fields(GRPOConfig) if f.init}
    for key in sorted(set(grpo_config) - fields - TRAINER_SET):
        close = difflib.get_close_matches(key, sorted(fields), n=1)
        problems.append(f"{where}.grpo_config.{key}: trl.GRPOConfig has no field {key!r}"
                        + (f"; did you mean {close[0]!r}?" if close else ""))
    return problems


def preflight_grpo(options: GRPOOptions, preflight: Any) -> list[str]:
    """Checks before anything is built: the temperatures agree (the log-probs must be those of
    the distribution the samples were drawn from), peft is installed for ``lora``, ``model``
    exists, ``grpo_config`` names real ``GRPOConfig`` fields and TRL has what the trainer uses.
    The last two import trl (seconds), nothing is loaded."""
    from spade_core.config.preflight import missing_package

    where = preflight.where
    loop = preflight.config.config.loop
    problems = []
    roles = [("loop.agent_temperature", loop.agent_temperature)]
    if options.train_designer:
        roles.append(("loop.designer_temperature", loop.designer_temperature))
    for key, value in roles:
        if abs(value - options.temperature) > 1e-9:
            problems.append(
                f"{where}.temperature and {key}: {options.temperature} and {value} disagree; the "
                "trainer takes log-probs at its temperature, so with another sampling "
                "temperature they belong to another distribution than the samples'; set both to "
                "the same value" + ("" if key.startswith("loop.agent") else
                                    " (or train_designer: false)"))
    if options.lora is not None:
        missing = missing_package("peft", "lora", f"{where}.lora", "LoRA training")
        problems += [missing] if missing else []
    if options.model:
        from plugins.backends.plugin import model_problem

        problem = model_problem(options.model)
        problems += [f"{where}.model: {problem}"] if problem else []
    if not problems:
        problems += [f"{where}: {p}" for p in trl_problems()]
        problems += grpo_config_problems(options.grpo_config, where)
    return problems

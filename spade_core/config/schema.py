"""The top-level config schema. Every field is documented in ``docs/config.md``.

Component sections (``corpus``, ``designer``, ``families``, ``sandbox``, ``estimator``, ``memory``,
``backend``, ``trainer``) select a plugin by name and carry that plugin's options, which the plugin's
own schema validates. Unknown keys are errors everywhere.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class Selection(Strict):
    """Selects one plugin component by name and gives it options."""

    plugin: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


def _selection(value: Any) -> Any:
    # ``estimator: regret`` is shorthand for ``estimator: {plugin: regret}``.
    return {"plugin": value} if isinstance(value, str) else value


class RunSection(Strict):
    """Where the run lives and how long it runs."""

    name: str = Field(default="run", min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    dir: str = "runs/{name}-{timestamp}"
    seed: int = 0
    iterations: int = Field(default=1, ge=1)
    #: fsync each write of the run's files (durable through a machine crash); without it a
    #: write is still whole or absent after a killed process (temp file + rename).
    fsync: bool = True


class ModelSection(Strict):
    """The one policy that plays both roles."""

    path: str = "bundled:smollm2-135m"


class LoopSection(Strict):
    """Sizes of one self-play iteration."""

    envs_per_iteration: int = Field(default=4, ge=1)
    rollouts_per_env: int = Field(default=4, ge=1)
    max_turns: int = Field(default=4, ge=1)
    max_attempts: int = Field(default=2, ge=1)
    #: Of the retries (``max_attempts - 1``), how many are repair turns: the rejected answer goes
    #: back to the designer with its verdict. Later retries sample afresh from the first prompt.
    max_repairs: int = Field(default=1, ge=0)
    designer_max_tokens: int = Field(default=512, ge=16)
    agent_max_tokens: int = Field(default=64, ge=4)
    hint_max_tokens: int = Field(default=96, ge=4)
    designer_temperature: float = Field(default=0.8, ge=0.0)
    agent_temperature: float = Field(default=0.8, ge=0.0)
    hint_temperature: float = Field(default=0.3, ge=0.0)
    #: Nucleus sampling per role, over the backend's ``top_p`` option for that role's calls
    #: (1 switches it off); ``None``: the backend's option (off unless set there).
    designer_top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    agent_top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    hint_top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    #: Top-k sampling per role (0 switches it off); ``None``: the backend's ``top_k`` option.
    designer_top_k: int | None = Field(default=None, ge=0)
    agent_top_k: int | None = Field(default=None, ge=0)
    hint_top_k: int | None = Field(default=None, ge=0)
    #: ``enable_thinking`` for the role's chat template (Qwen3's switch); ``None`` leaves the
    #: variable unset: the backend's ``chat_template_kwargs``, else the template's own default.
    designer_enable_thinking: bool | None = None
    agent_enable_thinking: bool | None = None
    invalid_reward: float = -0.5
    duplicate_reward: float = 0.0
    timeout_reward: float = -0.5
    #: Train the agent on hinted episodes too. The reference plays hinted episodes only to
    #: measure regret (they return a reward, no trajectory): off by default.
    train_on_hinted: bool = False
    #: A reply cut off at ``agent_max_tokens`` without an end of sequence ends its episode at
    #: once, unstepped, with reward 0 (the reference's rule, set in the recipes). Off: the cut
    #: reply is stepped like any other.
    end_on_truncation: bool = False
    #: Train the designer on rejected attempts too, with ``invalid_reward``/``timeout_reward``.
    #: The reference discards failed attempts and regenerates: off by default.
    train_on_failed_attempts: bool = False
    #: Multiplies the designer's advantages (the reference's ``env_reward_scale``). ``None``:
    #: the reference's ``min(agent samples / designs x regeneration interval, cap)``, from each
    #: training step's own counts, masked designs included (``selfplay/designer_reward.py``
    #: ``env_reward_scale``), capped at ``env_reward_scale_cap``.
    env_reward_scale: float | None = Field(default=None, gt=0.0)
    env_reward_scale_cap: float = Field(default=50.0, gt=0.0)
    #: Episode reward that counts as success: validation's "solved", the estimators' win rate,
    #: the memory's mastery rule, the success metrics and the report all read this one number.
    success_threshold: float = Field(default=1.0, gt=0.0, le=1.0)
    #: Designer prompts per generation call; each finished chunk is validated in the sandbox while
    #: the next one generates. 0: the backend's own batch size (all at once if it has none).
    design_chunk: int = Field(default=0, ge=0)
    #: Frontier environments from the memory played again each iteration besides the new ones,
    #: so that statistics accumulate and environments can become mastered or too hard.
    replay_envs: int = Field(default=4, ge=0)
    #: Which frontier environments are replayed first: ``score`` (the estimator's latest designer
    #: reward, then regret), ``age`` (least recently played), ``uniform`` (seeded random).
    replay_priority: Literal["score", "age", "uniform"] = "score"
    #: Iterations an environment may be played; one still on the frontier then is ``retired``.
    replay_max_age: int = Field(default=8, ge=1)
    #: How environments live (docs/training.md, "Schedules"). ``window``: the reference's
    #: regeneration windows: a fresh set is designed every ``regeneration_interval`` iterations
    #: and played in every iteration of its window; the designer's samples are rewarded over the
    #: whole window and trained at the next window's start. ``frontier``: fresh proposals every
    #: iteration plus ``replay_envs`` frontier environments from the memory, designer rewarded at
    #: once.
    schedule: Literal["window", "frontier"] = "window"
    #: Iterations per window (the reference: 4 for games, 8 for tool use).
    regeneration_interval: int = Field(default=4, ge=1)
    #: Hinted episodes per environment, played at its window's start (or every iteration in the
    #: frontier schedule); ``None``: ``rollouts_per_env``; 0: no hint and no hinted episode (the
    #: reference's fixed-pool baseline). The reference: 16.
    hint_plays_per_env: int | None = Field(default=None, ge=0)
    #: A play that raised or timed out (``Episode.error``). ``drop`` (the reference): an
    #: unhinted one counts in no win rate, regret or learning signal and is no agent sample; a
    #: hinted one counts as reward 0, as the reference's hint arm does. ``zero``: every failed
    #: play counts and is trained with reward 0.
    failed_plays: Literal["drop", "zero"] = "drop"
    #: Where a timeout of the environment's own code marks its design (window schedule).
    #: ``start`` (the reference): only a timeout in the window's first iteration gives the
    #: regret variant's penalty, and an environment that timed out is not played again in its
    #: window. ``window``: a timeout in any iteration of the window gives the penalty, and the
    #: environment keeps being played.
    timeouts: Literal["start", "window"] = "start"
    #: ``selfplay``: the designer proposes; ``fixed-pool``: environments come from ``pool``.
    mode: Literal["selfplay", "fixed-pool"] = "selfplay"
    pool: str | None = None
    #: How a fixed pool is drawn. ``by-id``: pool environments not played yet, in id order, with
    #: replays as in self-play. ``shuffle`` (the reference's ``--spade-no-replacement``): a
    #: seeded shuffle of the whole pool walked without replacement, ``envs_per_iteration`` per
    #: draw, reshuffled when it runs out; no replays, every environment whatever its status.
    pool_order: Literal["by-id", "shuffle"] = "by-id"
    #: Seed of the ``shuffle`` draw (the reference's ``--spade-fixed-pool-seed``, 42);
    #: ``None``: ``run.seed``.
    pool_seed: int | None = None
    #: Asynchronous training (docs/training.md, "Asynchronous training"): iteration i+1 is
    #: generated while iteration i trains, on weights at most ``async_level`` updates old; every
    #: sample records the policy version and log-probabilities it was generated with, stale
    #: samples are corrected by truncated importance sampling and those older than
    #: ``async_level`` updates are dropped. 0: sequential (generate, then train).
    async_level: int = Field(default=0, ge=0)

    def template_kwargs(self, role: Literal["designer", "agent"]) -> dict[str, Any] | None:
        """The chat template variables the role's prompts are rendered with (``None``: none of
        its own, the backend's apply)."""
        thinking = getattr(self, f"{role}_enable_thinking")
        return None if thinking is None else {"enable_thinking": thinking}

    @model_validator(mode="after")
    def _pool_for_fixed_pool(self) -> "LoopSection":
        if self.mode == "fixed-pool" and not self.pool:
            raise ValueError("loop.mode fixed-pool needs loop.pool: a run directory filled by "
                             "`spade envs import` or a folder of .py programs / a .jsonl file")
        return self


class LLMValidatorSection(Strict):
    """The optional LLM validator: after the sandbox's rules (and the reset gate) pass a program,
    a model reads its source and answers ``\\boxed{yes}`` or ``\\boxed{no}`` (the family's
    ``EnvFamily.validator_instructions``). A "no" is the verdict ``llm_rejected``; a reply without
    a verdict, or a failed call, accepts (the reference's rule)."""

    enabled: bool = False
    #: A generation backend for the validator calls, selected like ``backend``; ``None``: the
    #: policy (the reference's ``self``, both tool-use recipes' choice).
    backend: Selection | None = None
    temperature: float = Field(default=0.3, ge=0.0)
    #: ``None``: the backend's own ``top_p`` option. The reference: its adapter's 0.9.
    top_p: float | None = Field(default=0.9, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=0)
    max_tokens: int = Field(default=16384, ge=16)

    @field_validator("backend", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return _selection(value)


class ValidationSection(Strict):
    """How designed environments are validated (``spade_core.validation``), whatever the sandbox."""

    junk_steps: int = Field(default=30, ge=1)
    max_solution_steps: int = Field(default=1000, ge=1)
    #: Programs validated at once; ``None``: two per CPU.
    concurrency: int | None = Field(default=None, ge=1, le=1024)
    #: The reference's "criteria at reset" gate (``SPADE_RESET_GATE``): refuse a program whose
    #: ``_message_criteria`` raise on the initial ``_state`` of every seed tried (0, 1, 2).
    #: Not applied in iteration 0, as in the reference.
    reset_gate: bool = False
    llm: LLMValidatorSection = Field(default_factory=LLMValidatorSection)


class CheckpointSection(Strict):
    """When to checkpoint (for ``spade run --resume``) and how many checkpoints to keep."""

    every: int = Field(default=1, ge=0)
    keep: int = Field(default=2, ge=1)


class LoggingSection(Strict):
    """Metric sinks besides ``metrics.jsonl`` (always written); each needs its optional extra."""

    backends: list[Literal["tensorboard", "trackio", "wandb"]] = Field(default_factory=list)
    project: str = Field(default="spade-rl", min_length=1)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ContaminationSection(Strict):
    """Refuse designed environments whose task text is too close to an item of ``eval.suites``
    (verdict ``contaminated``), compared in the environment memory's embedding space."""

    threshold: float | None = Field(default=None, gt=0.0, le=1.0)
    limit: int = Field(default=500, ge=1)


class EvalSection(Strict):
    """Held-out evaluation (``docs/eval.md``): the suites ``spade eval`` runs by default and the
    contamination guard compares with."""

    suites: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Where suites whose data ships on no package index read it, by suite: a local file or
    #: folder, or ``hf:DATASET[:CONFIG]`` (the local datasets cache only). Given to a suite as
    #: its ``data`` option unless ``options.<suite>.data`` sets one (docs/eval.md).
    data: dict[str, str | list[str]] = Field(default_factory=dict)
    contamination: ContaminationSection = Field(default_factory=ContaminationSection)
    #: In-run evaluation: after the training of every ``every``-th iteration, ``suites`` are
    #: played with the live policy and scored into that iteration's ``metrics.jsonl`` row
    #: (``eval``). 0: never.
    every: int = Field(default=0, ge=0)
    #: Replies per item in the in-run evaluation (pass@``samples`` is logged too when above 1).
    samples: int = Field(default=1, ge=1)
    #: Tokens per reply in the in-run evaluation; ``None``: ``loop.agent_max_tokens``.
    max_new_tokens: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _suites_for_every(self) -> "EvalSection":
        if self.every and not self.suites:
            raise ValueError("eval.every needs eval.suites: the suites to evaluate in the run "
                             "(e.g. suites: [reasoning-gym], limit: 20)")
        return self


class HintsSection(Strict):
    """How privileged hints are written (``docs/designer.md``, "Hints")."""

    #: Which instructions the hint call gets: ``family`` (each family's own,
    #: ``EnvFamily.hint_instructions``: a game prompt, a procedural one for tool use; the
    #: reference's split) or ``single`` (the project's earlier one prompt for every family).
    prompt: Literal["family", "single"] = "family"
    #: A generation backend that writes the hints instead of the policy, selected like
    #: ``backend`` (e.g. ``{plugin: openai, options: {base_url: ..., model: ...}}``: the
    #: reference's external hint model). ``None``: the policy writes its own hints.
    backend: Selection | None = None

    @field_validator("backend", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return _selection(value)


class SpadeConfig(Strict):
    """A whole run config."""

    run: RunSection = Field(default_factory=RunSection)
    model: ModelSection = Field(default_factory=ModelSection)
    loop: LoopSection = Field(default_factory=LoopSection)
    validation: ValidationSection = Field(default_factory=ValidationSection)
    checkpoint: CheckpointSection = Field(default_factory=CheckpointSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)
    eval: EvalSection = Field(default_factory=EvalSection)
    hints: HintsSection = Field(default_factory=HintsSection)
    corpus: Selection
    designer: Selection
    families: list[Selection] = Field(min_length=1)
    sandbox: Selection
    estimator: Selection
    memory: Selection
    backend: Selection
    trainer: Selection = Field(default_factory=lambda: Selection(plugin="none"))

    @field_validator(
        "corpus", "designer", "sandbox", "estimator", "memory", "backend", "trainer",
        mode="before",
    )
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return _selection(value)

    @field_validator("families", mode="before")
    @classmethod
    def _families(cls, value: Any) -> Any:
        if isinstance(value, (str, dict)):
            value = [value]
        return [_selection(v) for v in value] if isinstance(value, list) else value


#: Config section -> component kind, for component sections.
SECTION_KINDS: dict[str, str] = {
    "corpus": "corpus_sampler",
    "designer": "prompt_strategy",
    "families": "env_family",
    "sandbox": "sandbox",
    "estimator": "difficulty_estimator",
    "memory": "env_memory",
    "backend": "generation_backend",
    "trainer": "trainer",
}

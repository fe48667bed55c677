"""Records that cross module boundaries: documents, programs, verdicts, episodes, difficulty,
and the environment memory's record of each proposed environment (:class:`EnvRecord`).

They are plain dataclasses so that plugins can build them without importing anything heavy, and so
that they serialise to JSON (``dataclasses.asdict``) for run logs and the environment memory.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from collections.abc import Mapping
from typing import Any

from spade_core.messages import printable

class VerdictCategory(StrEnum):
    """Why a program was judged as it was; ``ok`` is the only valid one. Members compare equal to
    their string values, which is how they are stored in records and logs."""

    OK = "ok"
    SYNTAX = "syntax"
    FORBIDDEN = "forbidden"
    INTERFACE = "interface"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    CRASH = "crash"
    NONDETERMINISTIC = "nondeterministic"
    UNSOLVABLE = "unsolvable"
    TRIVIAL = "trivial"
    ENDLESS = "endless"
    CONTAMINATED = "contaminated"
    CRITERIA_AT_RESET = "criteria_at_reset"
    LLM_REJECTED = "llm_rejected"


class EnvStatus(StrEnum):
    """Where an environment stands in the memory: being learned (``frontier``), retired because
    the agent masters it (``mastered``), cannot learn it (``too_hard``) or has been replayed for
    ``loop.replay_max_age`` iterations without either (``retired``), refused by validation
    (``rejected``) or as a near-duplicate of a mastered one (``duplicate``)."""

    FRONTIER = "frontier"
    MASTERED = "mastered"
    TOO_HARD = "too_hard"
    RETIRED = "retired"
    REJECTED = "rejected"
    DUPLICATE = "duplicate"


class Role(StrEnum):
    """The two roles the one policy plays."""

    DESIGNER = "designer"
    AGENT = "agent"


#: Every verdict category, as plain strings (``ok`` first).
VERDICT_CATEGORIES: tuple[str, ...] = tuple(c.value for c in VerdictCategory)
#: Every environment status, as plain strings.
ENV_STATUSES: tuple[str, ...] = tuple(s.value for s in EnvStatus)


@functools.lru_cache(maxsize=4096)  # asked again and again for the same programs
def program_id(source: str) -> str:
    """Stable id of an environment program: sha256 of its source with line endings and trailing
    whitespace normalised, so that the same program saved twice gets the same id."""
    lines = [line.rstrip() for line in source.replace("\r\n", "\n").split("\n")]
    normalised = "\n".join(lines).strip() + "\n"
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Document:
    """One grounding document from a corpus."""

    id: str
    text: str
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EnvProgram:
    """An environment program: untrusted Python source and what is known about where it came from."""

    source: str
    family: str
    doc_id: str | None = None
    description: str = ""

    @property
    def id(self) -> str:
        return program_id(self.source)


@dataclass(frozen=True)
class StepResult:
    """What one ``step(action)`` returned, already type-checked and size-capped by the sandbox."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """The outcome of validating one program. ``category`` is one of :data:`VERDICT_CATEGORIES`.

    ``message`` is for people and may quote what a worker sent: its control characters are
    escaped here (:func:`spade_core.messages.printable`), so no verdict printed anywhere can put an
    escape sequence on a terminal."""

    valid: bool
    category: str
    message: str
    observation: str = ""
    seconds: float = 0.0
    line: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.message, str):
            object.__setattr__(self, "message", printable(self.message))


@dataclass
class Turn:
    """One agent action and what the environment answered."""

    action: str
    observation: str
    reward: float
    terminated: bool = False
    truncated: bool = False
    #: The reply is kept out of the loss (a malformed tool call under the reference protocol).
    masked: bool = False


@dataclass
class Episode:
    """One play of an environment by the agent, hinted or not.

    ``reward`` follows the reference definition: the last step's reward clipped to [-1, 1] if the
    episode terminated, else 0.
    """

    env_id: str
    seed: int
    hinted: bool
    first_observation: str
    turns: list[Turn] = field(default_factory=list)
    reward: float = 0.0
    error: str | None = None
    #: The environment's own call (reset or step) ran out of time: the reference's regret
    #: variant penalises the design for it.
    timed_out: bool = False
    #: The agent's last reply hit its token limit without an end of sequence, and the episode
    #: ended there without stepping it (``loop.end_on_truncation``); its reward is 0.
    cut_off: bool = False


@dataclass(frozen=True)
class Difficulty:
    """What a difficulty estimator says about one environment, and the loop's record of it.

    An estimator returns ``Difficulty(figures, designer_reward)``, with ``train=False`` for a
    design the designer must not be trained on; it leaves ``regret`` out: the loop fills it
    (:meth:`with_regret`). ``designer_reward`` is what the designer is trained on, ``figures``
    any further named numbers for logs and the memory (e.g. ``win_rate``). The logs read two
    of the fields from ``figures`` too: ``figures["regret"]`` and ``figures["masked"]`` (1 when
    ``train`` is false) are copies, set whatever the estimator put there.
    """

    figures: dict[str, float]
    designer_reward: float
    #: Whether the designer is trained on this design (``False``: masked, e.g. the reference's
    #: negative blend, ``proposer_masked``; its reward is still logged, and the design still
    #: counts in the designer's advantage scale).
    train: bool = True
    #: Mean hinted minus mean unhinted episode reward (the mean of no rewards being 0), set by
    #: the loop from the estimate's input (:attr:`EstimateInput.regret
    #: <spade_core.interfaces.EstimateInput.regret>`); ``None`` as an estimator returns it.
    regret: float | None = None

    def __post_init__(self) -> None:
        copies = {"masked": 0.0 if self.train else 1.0}
        if isinstance(self.regret, (int, float)) and not isinstance(self.regret, bool):
            copies["regret"] = float(self.regret)
        object.__setattr__(self, "figures", {**self.figures, **copies})

    def with_regret(self, regret: float) -> "Difficulty":
        """This estimate with the loop's ``regret`` (mirrored in ``figures``)."""
        return replace(self, regret=float(regret))


@dataclass(frozen=True)
class DesignTarget:
    """What one proposal asks the designer for, chosen by the family's rotation
    (:meth:`EnvFamily.design_target`): one skill, one difficulty level and, for families that have
    them, further variant choices (the tool-use family's domain and task type)."""

    #: The skill asked for (``None``: the family has no skills; all of its guide applies).
    skill: str | None = None
    #: The difficulty level asked for, 1 = easiest (0: the family has no levels).
    level: int = 0
    #: Further choices by name, e.g. ``{"domain": "banking", "task_type": "execute"}``.
    variant: Mapping[str, str] = field(default_factory=dict)


@dataclass
class EnvIteration:
    """One iteration's play of an environment: the raw episode rewards and what the estimator said."""

    iteration: int
    hinted: list[float] = field(default_factory=list)
    unhinted: list[float] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)
    designer_reward: float = 0.0
    at: float = 0.0


@dataclass
class EnvRecord:
    """Everything the memory keeps about one proposed environment."""

    id: str
    source: str
    family: str
    status: str
    doc_id: str | None = None
    description: str = ""
    verdict_category: str = ""
    verdict_message: str = ""
    hint: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    duplicate_of: str | None = None
    duplicate_similarity: float | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    #: Unit-length embedding of the environment's text representation (``None`` until embedded).
    embedding: list[float] | None = None
    #: Per-iteration statistics, oldest first (filled by the memory from ``update_stats``).
    history: list[EnvIteration] = field(default_factory=list)
    #: How often the designer proposed this exact program (same id).
    times_proposed: int = 1
    #: The skill the designer was asked for ("" when the prompt named none, e.g. a pool import).
    skill: str = ""
    #: The difficulty level the designer was asked for (1 = easiest; 0 when none was asked).
    level: int = 0
    #: Repair turns the designer used before this program (rejected answers sent back).
    repairs: int = 0


def record_to_dict(record: EnvRecord) -> dict[str, Any]:
    """A record as plain JSON-ready data (history included), the form checkpoints and exports
    write."""
    return asdict(record)


def record_from_dict(data: dict[str, Any]) -> EnvRecord:
    """The record :func:`record_to_dict` wrote. Keys this version does not know are ignored, so a
    snapshot written by a newer version with extra fields still loads."""
    known = {f.name for f in fields(EnvRecord)}
    values = {k: v for k, v in data.items() if k in known}
    iteration_keys = {f.name for f in fields(EnvIteration)}
    values["history"] = [EnvIteration(**{k: v for k, v in h.items() if k in iteration_keys})
                         for h in values.get("history") or []]
    return EnvRecord(**values)

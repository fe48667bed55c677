"""Options of the built-in eval suites (pydantic models, light to import: ``spade plugins``
imports them)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from spade_core.config.schema import Selection


def _plugin_shorthand(value: Any) -> Any:
    """``user_backend: openai`` means ``{plugin: openai}``, as a config section's shorthand."""
    return {"plugin": value} if isinstance(value, str) else value


#: A suite's own backend selection (the simulated user of tau2 and ACEBench): a mapping as the
#: config's ``backend`` takes it, or a plugin name; ``None``: the backend under evaluation.
BackendSelection = Annotated[Selection | None, BeforeValidator(_plugin_shorthand)]

REASONING_GYM_BUCKETS = ("math", "algorithmic", "cognition", "logic")
BFCL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance", "live_relevance", "java", "javascript",
                   "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                   "multi_turn_long_context")
Tau2Domain = Literal["retail", "airline", "telecom"]
TAU2_DOMAINS: tuple[str, ...] = get_args(Tau2Domain)
BFCL_DEFAULT_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
#: The reference's default GEM games (its ``DEFAULT_GEM_TASKS["game"]`` less Wordle, whose word
#: list is downloaded at run time).
GEM_GAMES = ("game:Mastermind-v0-hard", "game:TowerofHanoi-v0-hard", "game:Sokoban-v0-hard",
             "game:Crosswords-v0-easy")
Bucket = Literal["math", "algorithmic", "cognition", "logic"]
Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance", "live_relevance", "java", "javascript",
                   "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                   "multi_turn_long_context"]


class ReasoningGymSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    buckets: list[Bucket] = Field(default_factory=lambda: list(REASONING_GYM_BUCKETS),
                               description="buckets to evaluate: " + ", ".join(
                                   REASONING_GYM_BUCKETS))
    datasets: list[str | dict[str, Any]] = Field(default_factory=list, description=(
        "further reasoning-gym datasets, as names or {name, config} mappings, evaluated as "
        "the bucket 'extra' (generated and scored in the sandbox like the others)"))
    overrides: dict[str, dict[str, Any]] = Field(default_factory=dict, description=(
        "hard dataset -> config fields replacing its published hard parameters (appendix A.3 "
        "of arXiv 2505.24760), e.g. {sokoban: {max_w: 12}}"))
    exclude: list[str] = Field(default_factory=list, description=(
        "hard datasets left out of their buckets"))
    protocol: Literal["default", "reference"] = Field(default="default", description=(
        "default: --limit items spread over the buckets (50 per bucket without one) at seeds of "
        "their own, the family's agent instructions, partial scores kept; reference: the SPADE "
        "reference's protocol (what --table rq1 uses): `episodes` per dataset drawn as it draws "
        "them, its <answer> prompt and answer reading, a win only for a full score"))
    episodes: int = Field(default=8, ge=1, description=(
        "protocol reference: episodes per dataset (8: the reference's, 800 over the 100 "
        "datasets)"))


class BfclSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    categories: list[Category] = Field(default_factory=lambda: list(BFCL_DEFAULT_CATEGORIES),
                                  description="BFCL categories: " + ", ".join(BFCL_CATEGORIES)
                                              + " (default: the five non-live Python ones)")
    max_steps: int | None = Field(default=None, ge=1, description=(
        "multi-turn: steps with tool calls per user turn before an entry is force-terminated "
        "(None: BFCL's MAXIMUM_STEP_LIMIT, 20)"))


class ProgramsSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="a folder of .py programs or a .jsonl file of them")
    field: str | None = Field(default=None, description="JSONL field holding the program "
                                                        "(None: the usual ones)")
    bucket: str | None = Field(default=None, description="JSONL field whose value buckets "
                               "the items, e.g. answer (the per-answer split); None: by family")

class ArithmeticSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cells: list[str] = Field(default_factory=lambda: ["2+1", "2+2"], min_length=1,
                             description="arithmetic cells to ask, each a bucket (DIGITS OP "
                                         "DIGITS, e.g. 2+1; docs/environments.md)")
    items_per_cell: int = Field(default=500, ge=1,
                                description="held-out items per cell (fewer where a cell has "
                                            "fewer held-out pairs: 1+1 has 61)")

    @field_validator("cells")
    @classmethod
    def _cells(cls, value: list[str]) -> list[str]:
        from plugins.families.arithmetic import check_cells

        return check_cells(value)


#: The ``data`` option of suites that read public files (filled from ``eval.data.<suite>``).
DATA_DESCRIPTION = ("where the data is: a local file or folder (.jsonl, .json, .parquet, .csv), "
                    "a save_to_disk folder, or hf:DATASET[:CONFIG] in the local datasets cache "
                    "(never downloaded); a list reads several. Default: eval.data.<suite>")


class AimeSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: str | list[str] | None = Field(default=None, description=DATA_DESCRIPTION)
    years: list[int] | None = Field(default=None, description=(
        "years to evaluate, each a bucket (None: every year the data holds; the paper reports "
        "2025 and 2026, the reference also runs 2024)"))
    last_integer: bool = Field(default=False, description=(
        "score a reply without \\boxed{} by its last integer (the reference scores it 0)"))


class Tau2SuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    domains: list[Tau2Domain] = Field(
        default_factory=lambda: list(TAU2_DOMAINS),
        description="tau2-bench domains, each a bucket (default: all three, the paper's "
                    "τ²-Retail, τ²-Airline and τ²-Telecom columns)")
    split: str = Field(default="base", description=(
        "tau2's task split: base (the leaderboard's: retail 114, airline 50, telecom 114), test "
        "(retail 40, airline 20, telecom 40), train, or telecom's full (2285) and small (20)"))
    max_steps: int = Field(default=200, ge=2, description=(
        "messages (agent, user, tool results) before an episode ends unscored (tau2's "
        "DEFAULT_MAX_STEPS, 200)"))
    max_errors: int = Field(default=10, ge=1, description=(
        "failed tool calls (agent's and customer's) before an episode ends unscored (tau2's "
        "DEFAULT_MAX_ERRORS, 10)"))
    user_backend: BackendSelection = Field(default=None, description=(
        "the generation backend playing the customer, selected like the config's backend "
        "(e.g. {plugin: openai, options: {base_url: ..., model: ...}}, or a plugin name); "
        "None: the backend under evaluation plays the customer too"))


class GpqaDiamondSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: str | list[str] | None = Field(default=None, description=DATA_DESCRIPTION)
    shuffles: int = Field(default=1, ge=1, description=(
        "orders of the four choices per question, each played as an item and averaged (1: one "
        "fixed order per question, as the reference's figure)"))
    shuffle_seed: int = Field(default=42, description=(
        "seed of the choice orders (42: the reference's)"))


class LiveCodeBenchSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: str | None = Field(default=None, description=(
        "LiveCodeBench's code_generation_lite JSONL file (e.g. test6.jsonl), or a folder "
        "holding it (a Hugging Face cache of the dataset works), or with `release` the folder "
        "of the release's files; also set by eval.data.livecodebench. Nothing is downloaded"))
    release: Literal["release_v1", "release_v2", "release_v3", "release_v4", "release_v5",
                     "release_v6", "v1", "v2", "v3", "v4", "v5", "v6"] | None = Field(
        default=None, description=(
            "read a release's files from the data folder, as lcb_runner loads them: release_vN "
            "is cumulative (test.jsonl .. testN.jsonl; release_v6: 1,055 problems, the paper's "
            "figure, what --table rq1 plays), vN the problems release N added (v6: "
            "test6.jsonl); None: the one file `data` names (or test6.jsonl in its folder)"))
    temperature: float | None = Field(default=None, ge=0, description=(
        "sampling temperature of this suite's replies (0.2: lcb_runner's and the reference's, "
        "what --table rq1 plays); None: the eval's --temperature"))
    start_date: date | None = Field(default=None, description=(
        "keep problems whose contest_date is on or after this day (None: from the file's first)"))
    end_date: date | None = Field(default=None, description=(
        "keep problems whose contest_date is on or before this day (None: to the file's last)"))
    test_seconds: float = Field(default=6.0, gt=0, description=(
        "a test that uses more CPU seconds fails (LiveCodeBench's per-test timeout, counted "
        "in CPU time so a score does not depend on load); the whole item is also bounded by "
        "the sandbox's step_seconds"))


class GemSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    games: list[str] = Field(default_factory=lambda: list(GEM_GAMES), description=(
        "GEM game ids, each a bucket (default: the reference's game set less Wordle: "
        + ", ".join(GEM_GAMES) + "); Wordle, Hangman and WordSearch download nltk data and "
        "are refused"), min_length=1)
    episodes: int = Field(default=8, ge=1, description=(
        "episodes (items) per game, at seeds seed, seed + 1, ... (8: the reference's)"))
    max_turns: int = Field(default=40, ge=1, description=(
        "replies per episode before it ends unwon, besides the game's own turn limit (40: the "
        "reference's)"))


#: ACEBench's English categories in its own order (``category.py``, ``test_all``).
AcebenchCategory = Literal[
    "normal_single_turn_single_function", "normal_single_turn_parallel_function",
    "normal_multi_turn_user_adjust", "normal_multi_turn_user_switch", "normal_similar_api",
    "normal_preference", "normal_atom_bool", "normal_atom_enum", "normal_atom_number",
    "normal_atom_list", "normal_atom_object_deep", "normal_atom_object_short",
    "special_incomplete", "special_error_param", "special_irrelevant",
    "agent_multi_step", "agent_multi_turn"]
ACEBENCH_CATEGORIES: tuple[str, ...] = get_args(AcebenchCategory)


class AcebenchSuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: str | None = Field(default=None, description=(
        "the folder holding ACEBench's English data (data_<category>.json and "
        "possible_answer/), or a clone of github.com/ACEBench/ACEBench (its data_all/data_en "
        "is used); also set by eval.data.acebench. Nothing is downloaded"))
    categories: list[AcebenchCategory] | None = Field(default=None, description=(
        "ACEBench categories to evaluate (None: all 17, ACEBench's test_all); each counts in "
        "its bucket normal, special or agent"))
    agent_turns: int = Field(default=40, ge=1, description=(
        "agent tasks: the agent's messages and calls before an episode ends (ACEBench's "
        "max_dialog_turns, 40)"))
    user_backend: BackendSelection = Field(default=None, description=(
        "the generation backend playing the simulated user of agent_multi_turn tasks, selected "
        "like the config's backend (e.g. {plugin: openai, options: {base_url: ..., model: "
        "...}}, or a plugin name); None: the backend under evaluation plays the user too "
        "(ACEBench and the reference use a separate model)"))

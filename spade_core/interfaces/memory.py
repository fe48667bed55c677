"""Environment memories: what has been proposed, played, mastered; near-duplicate refusal.

:class:`EnvMemory` is the one interface the core, checkpoints, fixed pools, the report and the
gymnasium registry use to reach a memory's data; none of them opens a memory's files directly.
Required methods are abstract; every optional capability (batched dedupe and search, summary
counts, checkpoints) has a working default built on the required ones, so callers call it
unconditionally and a memory that can do better overrides it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spade_core.records import (
    ENV_STATUSES,
    EnvProgram,
    EnvRecord,
    EnvStatus,
    record_from_dict,
    record_to_dict,
)

if TYPE_CHECKING:
    from spade_core.interfaces.prompts import PromptExamples

__all__ = ["ENV_STATUSES", "EnvMemory", "EnvStatus"]

#: Files of the default checkpoint format (``EnvMemory.save_checkpoint``).
CHECKPOINT_RECORDS = "records.jsonl"
CHECKPOINT_MANIFEST = "records.json"
CHECKPOINT_FORMAT = "spade-env-records"
CHECKPOINT_VERSION = 1


@dataclass(frozen=True)
class StatusRollouts:
    """How many recent rollouts a memory's status rules look at: ``mastery_rollouts`` unhinted
    ones decide ``mastered``, ``too_hard_rollouts`` hinted ones decide ``too_hard``."""

    mastery_rollouts: int
    too_hard_rollouts: int
    #: The memory's option names for the two counts, for error messages.
    mastery_key: str = "mastery_rollouts"
    too_hard_key: str = "too_hard_rollouts"


class StatusRolloutOptions(ABC):
    """Options of a memory whose status rules need a number of recent rollouts. A memory's
    options model that subclasses this lets ``spade config check`` refuse a run in which no
    environment can ever get that many (too few iterations, rollouts or replays)."""

    @abstractmethod
    def status_rollouts(self) -> StatusRollouts:
        """The rollout counts these options configure."""


def read_records_checkpoint(folder: Path) -> list[EnvRecord]:
    """Every record of a snapshot written by the default :meth:`EnvMemory.save_checkpoint`,
    checked against its manifest (a truncated or foreign snapshot raises ``ValueError``)."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / CHECKPOINT_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder}: not an environment-memory snapshot (no readable "
                         f"{CHECKPOINT_MANIFEST}: {exc})") from None
    if manifest.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{folder}: snapshot format {manifest.get('format')!r}, expected "
                         f"{CHECKPOINT_FORMAT!r} (a memory that saves its own format must also "
                         "restore it)")
    if int(manifest.get("version", 0)) > CHECKPOINT_VERSION:
        raise ValueError(f"{folder}: snapshot version {manifest.get('version')} is newer than "
                         f"this spade-rl reads ({CHECKPOINT_VERSION})")
    records = []
    with (folder / CHECKPOINT_RECORDS).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                records.append(record_from_dict(json.loads(line)))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{folder / CHECKPOINT_RECORDS} line {number}: {exc}") from None
    if len(records) != manifest.get("records"):
        raise ValueError(f"{folder}: the manifest lists {manifest.get('records')} records, "
                         f"{CHECKPOINT_RECORDS} holds {len(records)}")
    return records


class EnvMemory(ABC):
    """Durable store of environment records with similarity search.

    Required (abstract): :meth:`find_duplicate`, :meth:`add`, :meth:`update_stats`, :meth:`get`,
    :meth:`frontier_examples`, :meth:`negative_examples`, :meth:`records`, :meth:`search`,
    :meth:`clear`. Optional, each with a working default built on those: :meth:`find_duplicates`,
    :meth:`search_many`, :meth:`stats`, :meth:`save_checkpoint`, :meth:`restore_checkpoint`,
    :meth:`close`.
    """

    # -- required -----------------------------------------------------------------------------

    @abstractmethod
    def find_duplicate(self, program: EnvProgram) -> tuple[EnvRecord, float] | None:
        """The mastered environment ``program`` duplicates, with its similarity, else ``None``:
        the loop refuses such a program before spending any rollout on it."""

    @abstractmethod
    def add(self, record: EnvRecord) -> None:
        """Store ``record`` as given (status, stats, history, timestamps, embedding when set).
        A record whose id is already stored is not replaced: it only counts one more proposal
        (``times_proposed`` + 1), since the designer proposed the very same program again."""

    @abstractmethod
    def update_stats(
        self, env_id: str, iteration: int, hinted: Sequence[float], unhinted: Sequence[float],
        figures: dict[str, float], designer_reward: float,
    ) -> EnvRecord:
        """Record one iteration's play of a stored environment (appended to its history) and
        apply the status rules; returns the record with its new status. Unknown id: KeyError.
        A second call for the same environment and iteration (one program designed twice in an
        iteration) joins that iteration's history entry: plays appended, figures the latest."""

    @abstractmethod
    def get(self, env_id: str) -> EnvRecord | None:
        """The stored record with id ``env_id`` (history included), or ``None``."""

    @abstractmethod
    def frontier_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        """Up to ``k`` positive examples for the designer: environments at the agent's frontier,
        most instructive first (optionally of one family)."""

    @abstractmethod
    def negative_examples(self, k: int, family: str | None = None) -> list[EnvRecord]:
        """Up to ``k`` negative examples for the designer: environments not to propose again
        (mastered or too hard), most recent first (optionally of one family)."""

    @abstractmethod
    def records(self) -> Iterator[EnvRecord]:
        """Every stored record with its history, in insertion order. Fixed pools, checkpoints,
        the report and the gymnasium registry read a memory through it; a large memory should
        stream rather than load everything first."""

    @abstractmethod
    def search(self, query: str | EnvProgram | EnvRecord, k: int = 10, *,
               statuses: Sequence[str] | None = None, family: str | None = None,
               ) -> list[tuple[EnvRecord, float]]:
        """The ``k`` stored records nearest to ``query``, closest first, with their similarity
        (cosine for embedding memories: 1 is identical), optionally only those with a status in
        ``statuses`` and of ``family``. ``query`` is

        - ``str``: free text (what ``spade memory search "..."`` passes);
        - :class:`EnvProgram`: an environment program, compared the way :meth:`find_duplicate`
          compares programs (its representation, not its raw text);
        - :class:`EnvRecord`: an environment as stored, e.g. from :meth:`get`: its stored
          ``embedding`` is used when it has one, so no embedding model is needed (the report's
          "nearest stored environments"), else its source and description as a program. The
          record itself (same id) is never among the results.
        """

    @abstractmethod
    def set_status(self, env_id: str, status: str) -> EnvRecord:
        """Move a stored environment to ``status`` (the loop retires frontier environments that
        reached ``loop.replay_max_age`` this way); returns the updated record. Raises
        ``KeyError`` for an unknown id."""

    def add_figures(self, env_id: str, iteration: int, figures: dict[str, float]) -> bool:
        """Merge ``figures`` into the history entry of ``env_id`` played at ``iteration``; returns
        whether that entry exists. The window schedule adds a design's delayed designer reward
        and its figures (keys ``delayed_*``) to its window's first entry this way. The default
        keeps nothing and returns ``False``: such a memory holds the immediate estimate only."""
        return False

    @abstractmethod
    def clear(self) -> None:
        """Remove every record (the memory's settings stay). The default
        :meth:`restore_checkpoint` empties the memory this way before re-adding the snapshot, so
        that records added after the snapshot do not survive a resume."""

    # -- optional, with working defaults --------------------------------------------------------

    def prompt_examples(self, positive: int, negative: int, family: str | None = None,
                        skill: str | None = None, seed: int = 0) -> "PromptExamples":
        """The examples for one designer prompt asking for ``skill`` of ``family``: up to
        ``positive`` to imitate and ``negative`` to avoid; ``seed`` is for memories that draw
        them at random (reproducibly). The default: :meth:`frontier_examples` and
        :meth:`negative_examples` of the family, whatever the skill and seed."""
        from spade_core.interfaces.prompts import PromptExamples

        return PromptExamples(positive=self.frontier_examples(positive, family),
                              negative=self.negative_examples(negative, family))

    def by_status(self, statuses: Sequence[str], family: str | None = None
                  ) -> Iterator[EnvRecord]:
        """The records with a status in ``statuses`` (and of ``family``), history included, in
        insertion order: the loop's replay draws the frontier this way. The default filters
        :meth:`records`; a memory with an index on status overrides it."""
        wanted = set(statuses)
        return (r for r in self.records()
                if r.status in wanted and (family is None or r.family == family))

    def find_duplicates(self, programs: Sequence[EnvProgram]
                        ) -> list[tuple[EnvRecord, float] | None]:
        """:meth:`find_duplicate` for many programs at once (the loop's dedupe calls this). The
        default asks one by one; a memory that embeds overrides it to embed in one batch."""
        return [self.find_duplicate(program) for program in programs]

    def search_many(self, queries: Sequence[str | EnvProgram | EnvRecord], k: int = 10, *,
                    statuses: Sequence[str] | None = None, family: str | None = None,
                    ) -> list[list[tuple[EnvRecord, float]]]:
        """:meth:`search` for many queries, one result list per query in order (the report asks
        for the neighbours of every environment). The default searches one by one; a memory
        that scans its vectors overrides it to scan once for many queries."""
        return [self.search(query, k, statuses=statuses, family=family) for query in queries]

    def stats(self) -> dict[str, Any]:
        """Summary counts for reports and ``spade memory stats``: ``records``, ``proposals``
        (sum of ``times_proposed``), ``by_status`` (every status of :data:`ENV_STATUSES`) and
        ``by_family`` (``{family: {"total": n, "mastered": m}}``); a memory may add its own keys.
        The default counts through :meth:`records`."""
        by_status = dict.fromkeys(ENV_STATUSES, 0)
        by_family: dict[str, dict[str, int]] = {}
        total = proposals = 0
        for record in self.records():
            total += 1
            proposals += record.times_proposed
            by_status[record.status] = by_status.get(record.status, 0) + 1
            row = by_family.setdefault(record.family, {"total": 0, "mastered": 0})
            row["total"] += 1
            row["mastered"] += record.status == EnvStatus.MASTERED
        return {"records": total, "proposals": proposals, "by_status": by_status,
                "by_family": by_family}

    def save_checkpoint(self, folder: Path) -> None:
        """Write a snapshot of everything the memory holds into ``folder`` (created if missing;
        the run's checkpoint makes it atomic and durable). Resume hands the same folder to
        :meth:`restore_checkpoint`.

        The default writes every record, history and embedding included, as JSON lines
        (``records.jsonl``, one :func:`record_to_dict` object per line, in insertion order) and
        a manifest ``records.json`` (``{"format": "spade-env-records", "version": 1, "records":
        N}``). A memory with its own storage overrides both methods with something cheaper."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        count = 0
        with (folder / CHECKPOINT_RECORDS).open("w", encoding="utf-8") as handle:
            for record in self.records():
                handle.write(json.dumps(record_to_dict(record), default=_json_default) + "\n")
                count += 1
        manifest = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "records": count}
        (folder / CHECKPOINT_MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")

    def restore_checkpoint(self, folder: Path) -> None:
        """Make this (open) memory hold exactly the snapshot :meth:`save_checkpoint` wrote into
        ``folder``: records added after it are dropped, statuses, statistics and history are as
        they were. Called on resume, after the memory is built from the run's config.

        The default reads and checks the whole snapshot first (a damaged one raises
        ``ValueError`` and leaves the memory untouched), then :meth:`clear` and :meth:`add` of
        every record."""
        records = read_records_checkpoint(Path(folder))
        self.clear()
        for record in records:
            self.add(record)

    def close(self) -> None:
        """Flush and release files, connections and locks; the default has none."""


def _json_default(value: Any) -> Any:
    """JSON for the values ``json`` does not know that records may carry: NumPy scalars and
    arrays in stats or embeddings (checked by module, so NumPy is never imported here)."""
    if type(value).__module__.partition(".")[0] == "numpy":
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")

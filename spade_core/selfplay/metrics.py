"""One row of ``metrics.jsonl`` per iteration: what the designer proposed, what was played,
what the agent did, how long each phase took. Read by the live table, the report and tests."""

from __future__ import annotations

from statistics import fmean
from typing import Any

from spade_core.interfaces import TrainingSample
from spade_core.records import EnvStatus, Episode
from spade_core.selfplay.proposal import Proposal
from spade_core.phases import PhaseTimer
from spade_core.selfplay.window import Window

__all__ = ["TOTALS", "hint_counts", "iteration_line", "iteration_metrics", "window_metrics"]


def _success(episodes: list[Episode], threshold: float) -> float:
    return fmean([1.0 if e.reward >= threshold else 0.0 for e in episodes]) if episodes else 0.0


def _by_target(proposals: list[Proposal], key: Any) -> dict[str, dict[str, int]]:
    """Per skill (or level): fresh proposals asking for it, how many were valid, and how many
    environments of it were played (replays included). Proposals without one are left out."""
    counts: dict[str, dict[str, int]] = {}
    for p in proposals:
        name = key(p)
        if not name:
            continue
        row = counts.setdefault(name, {"proposed": 0, "valid": 0, "played": 0})
        if not p.replayed:
            row["proposed"] += 1
            row["valid"] += bool(p.verdict and p.verdict.valid)
        row["played"] += p.difficulty is not None
    return dict(sorted(counts.items()))


def iteration_metrics(iteration: int, proposals: list[Proposal], mastered: int,
                      timer: PhaseTimer, success_threshold: float = 1.0,
                      retired: int = 0, memory_counts: dict[str, int] | None = None
                      ) -> dict[str, Any]:
    """One row of ``metrics.jsonl``. Designer figures (proposed, attempts, repairs, validity,
    duplicates, verdicts, the LLM validator's accepted and rejected attempts, designer reward)
    count this iteration's new proposals; play figures
    (played, regret, success, mastered, too hard, retired) count every environment played,
    replayed ones included; ``memory_counts`` (records by status) gives the pool sizes."""
    fresh = [p for p in proposals if not p.replayed]
    played = [p for p in proposals if p.difficulty is not None]
    categories: dict[str, int] = {}
    for p in fresh:
        key = p.verdict.category if p.verdict else "none"
        categories[key] = categories.get(key, 0) + 1
    counts = memory_counts or {}
    duplicates = sum(1 for p in fresh if p.status == EnvStatus.DUPLICATE)
    too_hard = sum(1 for p in proposals if p.status == EnvStatus.TOO_HARD)
    return {
        "iteration": iteration,
        "envs_proposed": len(fresh),
        "designer_attempts": sum(len(p.completions) for p in fresh),
        "repairs": sum(p.repairs for p in fresh),
        "repaired_valid": sum(1 for p in fresh if p.repairs and p.verdict and p.verdict.valid),
        "envs_valid": sum(1 for p in fresh if p.verdict and p.verdict.valid),
        "envs_duplicate": duplicates,
        "dedupe_hits": duplicates,
        "envs_replayed": sum(1 for p in played if p.replayed),
        "envs_played": len(played),
        "envs_mastered": mastered,
        "envs_too_hard": too_hard,
        "envs_retired": retired + too_hard,
        "envs_mastered_total": int(counts.get(EnvStatus.MASTERED, 0)),
        "frontier_size": int(counts.get(EnvStatus.FRONTIER, 0)),
        "mean_regret": fmean([p.difficulty.regret for p in played]) if played else 0.0,
        "mean_designer_reward": fmean([p.designer_reward for p in fresh]) if fresh else 0.0,
        "agent_success_unhinted": _success([e for p in played for e in p.unhinted],
                                           success_threshold),
        "agent_success_hinted": _success([e for p in played for e in p.hinted],
                                         success_threshold),
        "episodes_cut_off": sum(e.cut_off for p in played for e in p.unhinted + p.hinted),
        "plays_failed": sum(e.error is not None
                            for p in played for e in p.unhinted + p.hinted + p.failed),
        "turns_masked": sum(t.masked for p in played for e in p.unhinted + p.hinted
                            for t in e.turns),
        **hint_counts(played),
        "validator_accepted": sum(v for p in fresh for v in p.validator_verdicts),
        "validator_rejected": sum(not v for p in fresh for v in p.validator_verdicts),
        "verdicts": categories,
        "skills": _by_target(proposals, lambda p: p.target.skill),
        "levels": _by_target(proposals, lambda p: str(p.target.level) if p.target.level else None),
        "seconds": {k: round(v, 3) for k, v in timer.seconds.items()},
    }


def hint_counts(played: list[Proposal]) -> dict[str, int]:
    """How this iteration's hints fared (``HintDiagnostics``), over the environments played with
    a hint: ``hints`` of them; ``hints_redacted`` cut for leaking the solution; ``hints_hurt``
    whose hinted plays did worse than the unhinted; ``hints_checked`` whose family could compare
    the hint with the solution's answer, ``hints_contradict`` of them claiming another answer."""
    judged = [p.hint_diagnostics for p in played if p.hinted and p.hint_diagnostics]
    return {"hints": len(judged),
            "hints_redacted": sum(d.redacted for d in judged),
            "hints_hurt": sum(d.hurt is True for d in judged),
            "hints_checked": sum(d.contradicts is not None for d in judged),
            "hints_contradict": sum(d.contradicts is True for d in judged)}


def window_metrics(window: Window, iteration: int, released: list[TrainingSample]
                   ) -> dict[str, Any]:
    """The window entry of a row: where the iteration is in its window, and the designs held
    and released (with their mean delayed reward)."""
    return {"start": window.start, "offset": iteration - window.start,
            "envs": len(window.env_ids), "designs_held": len(window.designs),
            "designs_released": len(released),
            "mean_delayed_designer_reward": (fmean(s.reward for s in released)
                                             if released else None)}


#: Running totals of ``summary.json``, summed over the iterations' rows.
TOTALS = ("envs_proposed", "envs_valid", "envs_duplicate", "envs_played", "envs_mastered")


def _nothing_played(m: dict[str, Any]) -> bool:
    """Whether an iteration's metrics row played no environment: its regret and success figures
    are then placeholders (0), shown as "n/a"."""
    return not m.get("envs_played")


def iteration_line(m: dict[str, Any]) -> str:
    if _nothing_played(m):
        figures = "regret n/a, "
        tail = "success n/a (nothing played"
        tail += (f": 0 of {m['envs_proposed']} proposals valid)" if not m["envs_valid"] else ")")
    else:
        figures = f"regret {m['mean_regret']:.3f}, "
        tail = (f"success {m['agent_success_unhinted']:.2f} unhinted / "
                f"{m['agent_success_hinted']:.2f} hinted")
    return (f"iteration {m['iteration']}: proposed {m['envs_proposed']}, valid {m['envs_valid']}, "
            f"duplicate {m['envs_duplicate']}, played {m['envs_played']}, {figures}designer "
            f"reward {m['mean_designer_reward']:.3f}, {tail}; "
            + ", ".join(f"{k} {v:.1f}s" for k, v in m["seconds"].items()))

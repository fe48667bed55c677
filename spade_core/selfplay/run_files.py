"""Step: log, part one: an iteration's environments into the run directory. Each new
environment gets ``envs/<id>.json`` (document, designer prompt and completion, verdict, hint and
its diagnostics, plays, estimate, designer reward); a replay gets a line of ``replays.jsonl``; a
window's delayed designer rewards are added to their environments' files (docs/run-files.md)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from spade_core.selfplay.artifacts import RunArtifacts
from spade_core.selfplay.designer_reward import Delayed
from spade_core.selfplay.proposal import Proposal


#: How much of the grounding document ``envs/<id>.json`` keeps (``doc_text``; ``doc_chars`` is
#: its full length): enough to recognise it in the report without copying the corpus.
DOC_TEXT_CHARS = 2000


#: How much of each message of the designer's prompt ``envs/<id>.json`` keeps
#: (``designer_prompt``); the skeleton and instructions fit, a long document is cut.
PROMPT_MESSAGE_CHARS = 8000


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more chars]"


def _env_details(iteration: int, p: Proposal) -> dict[str, Any]:
    return {
        "id": p.env_id, "iteration": iteration, "family": p.family.name, "status": p.status,
        "doc_id": p.document.id, "doc_text": _clip(p.document.text, DOC_TEXT_CHARS),
        "doc_chars": len(p.document.text),
        "designer_prompt": [{"role": str(m.get("role", "")),
                             "content": _clip(str(m.get("content", "")), PROMPT_MESSAGE_CHARS)}
                            for m in p.prompt],
        "verdict": asdict(p.verdict) if p.verdict else None,
        "attempts": len(p.completions), "attempt_categories": p.attempt_categories,
        "repairs": p.repairs, "skill": p.target.skill, "level": p.target.level,
        "variant": dict(p.target.variant),
        "duplicate_of": p.duplicate_of, "duplicate_similarity": p.similarity, "hint": p.hint,
        "hint_redacted": p.hint_redacted,
        "hint_diagnostics": p.hint_diagnostics.to_dict() if p.hint_diagnostics else None,
        "difficulty": asdict(p.difficulty) if p.difficulty else None,
        "designer_reward": p.designer_reward,
        "hinted_rewards": [e.reward for e in p.hinted],
        "unhinted_rewards": [e.reward for e in p.unhinted],
        "sample_unhinted": asdict(p.unhinted[0]) if p.unhinted else None,
        "sample_hinted": asdict(p.hinted[0]) if p.hinted else None,
        "failed_unhinted": [asdict(e) for e in p.failed],
        "designer_completion": p.completions[-1] if p.completions else "",
    }


def _delayed_details(item: Delayed, iteration: int) -> dict[str, Any]:
    return {"window_start": item.window_start, "released_at": iteration,
            "designer_reward": item.designer_reward, "figures": item.figures,
            "trained": item.trained}


def _replay_details(iteration: int, p: Proposal) -> dict[str, Any]:
    return {"id": p.env_id, "iteration": iteration, "family": p.family.name,
            "status": p.status, "difficulty": asdict(p.difficulty) if p.difficulty else None,
            "hint_diagnostics": (p.hint_diagnostics.to_dict()
                                 if p.hinted and p.hint_diagnostics else None),
            "hinted_rewards": [e.reward for e in p.hinted],
            "unhinted_rewards": [e.reward for e in p.unhinted]}


def write_iteration(artifacts: RunArtifacts, iteration: int, proposals: list[Proposal],
                    delayed: list[Delayed] = ()) -> None:
    """``envs/<id>.json`` of each new environment (a replay: a line of ``replays.jsonl``, the
    iteration's lines appended together with one fsync); the window schedule's delayed designer
    rewards released this iteration go into their environments' files (``delayed``)."""
    artifacts.append_jsonl_rows("replays.jsonl", [_replay_details(iteration, p)
                                                  for p in proposals if p.replayed])
    for p in proposals:
        if not p.replayed:
            artifacts.write_env(p.env_id,
                                p.program or (p.completions[-1] if p.completions else ""),
                                _env_details(iteration, p))
    for item in delayed:
        artifacts.add_env_details(item.env_id, {"delayed": _delayed_details(item, iteration)})

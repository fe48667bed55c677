"""The run directory: resolved config, metrics, every proposed environment, and the summary.

Files are appended line by line (JSONL) or written atomically (temp file + rename), so a run that is
killed at any moment leaves every finished iteration readable.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from spade_core.atomic_files import write_atomic

if TYPE_CHECKING:
    from spade_core.selfplay.designer_reward import Delayed
    from spade_core.selfplay.proposal import Proposal


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class RunArtifacts:
    """Writes a run's files under ``run_dir``."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.envs_dir = run_dir / "envs"

    def create(self, resolved_config: dict[str, Any]) -> None:
        self.envs_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.run_dir / "config.resolved.yaml",
                     yaml.safe_dump(resolved_config, sort_keys=False))

    def append_jsonl(self, name: str, row: dict[str, Any]) -> None:
        self.append_jsonl_rows(name, [row])

    def append_jsonl_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` as lines and make them durable with one fsync (not one per line)."""
        if not rows:
            return
        with (self.run_dir / name).open("a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(row, default=_jsonable) + "\n" for row in rows))
            fh.flush()
            os.fsync(fh.fileno())

    def log_metrics(self, row: dict[str, Any]) -> None:
        self.append_jsonl("metrics.jsonl", row)

    def write_env(self, env_id: str, source: str, details: dict[str, Any]) -> None:
        """``envs/<id>.py`` (the program as written) and ``envs/<id>.json`` (everything else)."""
        write_atomic(self.envs_dir / f"{env_id}.py", source)
        write_atomic(self.envs_dir / f"{env_id}.json",
                     json.dumps(details, indent=1, default=_jsonable))

    def add_env_details(self, env_id: str, details: dict[str, Any]) -> bool:
        """Merge ``details`` into ``envs/<id>.json`` (rewritten atomically); returns whether the
        file exists."""
        path = self.envs_dir / f"{env_id}.json"
        if not path.is_file():
            return False
        data = json.loads(path.read_text(encoding="utf-8")) | details
        write_atomic(path, json.dumps(data, indent=1, default=_jsonable))
        return True

    def write_summary(self, summary: dict[str, Any]) -> None:
        write_atomic(self.run_dir / "summary.json", json.dumps(summary, indent=2,
                                                               default=_jsonable))


#: How much of the grounding document ``envs/<id>.json`` keeps (``doc_text``; ``doc_chars`` is
#: its full length): enough to recognise it in the report without copying the corpus.
DOC_TEXT_CHARS = 2000


#: How much of each message of the designer's prompt ``envs/<id>.json`` keeps
#: (``designer_prompt``); the skeleton and instructions fit, a long document is cut.
PROMPT_MESSAGE_CHARS = 8000


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more chars]"


def _env_details(iteration: int, p: "Proposal") -> dict[str, Any]:
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


def _delayed_details(item: "Delayed", iteration: int) -> dict[str, Any]:
    return {"window_start": item.window_start, "released_at": iteration,
            "designer_reward": item.designer_reward, "figures": item.figures,
            "trained": item.trained}


def _replay_details(iteration: int, p: "Proposal") -> dict[str, Any]:
    return {"id": p.env_id, "iteration": iteration, "family": p.family.name,
            "status": p.status, "difficulty": asdict(p.difficulty) if p.difficulty else None,
            "hint_diagnostics": (p.hint_diagnostics.to_dict()
                                 if p.hinted and p.hint_diagnostics else None),
            "hinted_rewards": [e.reward for e in p.hinted],
            "unhinted_rewards": [e.reward for e in p.unhinted]}


def write_iteration(artifacts: RunArtifacts, iteration: int, proposals: list["Proposal"],
                    delayed: list["Delayed"] = ()) -> None:
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

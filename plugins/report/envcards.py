"""The environment browser's cards: one per environment, with its highlighted source, verdict,
hint, sample trajectories, statistics and nearest neighbours, ready for the page template."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plugins.report.neighbours import Neighbour
from plugins.report.rundata import EnvView, as_number

#: Keys of ``envs/<id>.json`` the card shows in their own places; any other key is listed as is.
SHOWN_KEYS = frozenset({
    "id", "iteration", "family", "status", "doc_id", "verdict", "attempts", "attempt_categories",
    "duplicate_of", "duplicate_similarity", "hint", "hint_redacted", "hint_diagnostics",
    "difficulty",
    "designer_reward", "hinted_rewards", "unhinted_rewards", "sample_unhinted", "sample_hinted",
    "designer_completion", "skill", "level", "repairs", "doc_text", "doc_chars",
    "designer_prompt", "variant",
})


@dataclass
class Trajectory:
    """A sample episode: the first observation and each turn's action, observation and reward."""

    label: str
    seed: Any
    first_observation: str
    turns: list[dict[str, Any]]
    reward: float | None
    error: str | None


@dataclass
class EnvCard:
    """Everything the page shows about one environment."""

    env: EnvView
    source_html: str
    trajectories: list[Trajectory]
    neighbours: list[tuple[Neighbour, bool]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        return f"env-{self.env.id}"


def _trajectory(label: str, episode: Any) -> Trajectory | None:
    if not isinstance(episode, dict):
        return None
    turns = [t for t in episode.get("turns") or [] if isinstance(t, dict)]
    return Trajectory(label=label, seed=episode.get("seed"),
                      first_observation=str(episode.get("first_observation") or ""),
                      turns=turns, reward=as_number(episode.get("reward")),
                      error=episode.get("error"))


def highlight_python(source: str, line: int | None = None) -> str:
    """``source`` as pygments HTML with line numbers; ``line`` (a verdict's line) highlighted."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    lines = source.count("\n") + 1
    marked = [line] if isinstance(line, int) and 0 < line <= lines else []
    formatter = HtmlFormatter(cssclass="code", linenos="inline", hl_lines=marked, wrapcode=True)
    return highlight(source or "# (no program: the designer's answer held none)\n",
                     PythonLexer(), formatter)


def code_css() -> str:
    """The pygments colour rules for ``.code`` blocks."""
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="default").get_style_defs(".code")


def build_cards(envs: list[EnvView], neighbours: dict[str, list[Neighbour]]) -> list[EnvCard]:
    """One card per environment; a neighbour links to its card when the report holds it."""
    present = {e.id for e in envs}
    cards = []
    for env in envs:
        line = env.verdict.get("line")
        trajectories = [t for t in (_trajectory("unhinted", env.details.get("sample_unhinted")),
                                    _trajectory("hinted", env.details.get("sample_hinted")))
                        if t is not None]
        extra = {k: v for k, v in env.details.items() if k not in SHOWN_KEYS}
        cards.append(EnvCard(
            env=env,
            source_html=highlight_python(env.source, line if isinstance(line, int) else None),
            trajectories=trajectories,
            neighbours=[(n, n.id in present) for n in neighbours.get(env.id, [])],
            extra=extra))
    return cards

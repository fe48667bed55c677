"""GEM's text games through ``gem-llm`` (axon-rl/gem, module ``gem``): multi-turn games where
each reply is a move, played to the end and scored by whether the game was won. Offline: the
games and their word lists ship inside the package.

The games are the reference's default GEM game set (``DEFAULT_GEM_TASKS["game"]`` of its
``spade/core/eval/gem_tasks.py``) less Wordle, whose word list is nltk's ``words`` corpus,
downloaded at run time. The protocol follows the reference's GEM evaluator
(``spade/core/eval/gem_evaluator.py``):

- an episode is ``gem.make(game)`` reset at its seed; the first user message wraps the game's
  first observation (instructions, then its board) in the evaluator's game prompt, every later
  user message is the observation of the last move with the board after it;
- the whole reply is the action (GEM's games read the last ``\\boxed{}`` themselves);
- an episode ends when the game terminates or truncates, or after ``max_turns`` replies;
- an episode is won when its return (the sum of the game's rewards) reaches 1: GEM's games pay 1
  in all for a solved game (progress rewards included) and less otherwise. The score is 1 for a
  win and 0 otherwise, so pass@1 is the win rate.

Containment: the game runs in a sandbox worker per episode (``plugins/evals/preludes/
gem_episode.py``) on the suite's own environment (``spade suites install gem``: gem-llm pins
reasoning-gym 0.1.23, ours is 0.1.25); the host never imports GEM, and passes replies and
observations as text. GEM's Sokoban room
generation takes up to tens of seconds, over the sandbox's default 5 s per call: docs/eval.md
gives the ``--set`` line with :data:`SANDBOX_LIMITS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from spade_core.errors import ConfigError
from spade_core.interfaces import (
    EvalItem,
    EvalSettings,
    EvalSuite,
    GenerationBackend,
    Sandbox,
    SandboxSession,
)
from spade_core.interfaces.eval_suite import first_user_text
from spade_core.eval.sandboxed_scoring import ScorerFamily

from plugins.evals.episode_steps import advance, ask, close_sessions, start_episodes
from plugins.evals.items import per_bucket, spread
from plugins.evals.options import GEM_GAMES, GemSuiteOptions
from plugins.evals.suite_envs import suite_sandbox
#: GEM games whose module needs nltk and its ``words`` corpus (downloaded when first played).
NEEDS_DOWNLOAD = ("Wordle", "Hangman", "WordSearch")
GAME_ID = re.compile(r"game:([A-Za-z0-9]+)-v\d+-[a-z-]+")
#: The sandbox limits a run needs (``sandbox.options``): GEM generates a hard Sokoban room in
#: 0.3-25 s depending on the seed and the machine's load (docs/eval.md gives the --set line).
SANDBOX_LIMITS = {"step_seconds": 60.0, "reset_seconds": 60.0, "episode_seconds": 600.0}
#: Installed modules the fork servers import before forking.
PRELOAD = ("numpy", "pandas", "gem", "gem.envs", "gem.envs.game_env.mastermind",
           "gem.envs.game_env.tower_of_hanoi", "gem.envs.game_env.sokoban",
           "gem.envs.game_env.crosswords")
#: The program of every episode: the injected ``GemEpisode``, unchanged.
EPISODE_PROGRAM = ('"""One GEM game, played in this worker."""\n\n\n'
                   "class GemGameEnv(GemEpisode):\n    pass\n")
#: A win: the game's rewards add up to 1 (within rounding of its progress rewards).
WIN_RETURN = 1.0 - 1e-6


def check_games(games: Sequence[str]) -> None:
    """A ``ConfigError`` for a game id GEM's games do not spell, or one that downloads data."""
    for game in games:
        match = GAME_ID.fullmatch(game)
        if match is None:
            raise ConfigError(f"gem suite: {game!r} is not a GEM game id (game:Name-v0-level, "
                              f"e.g. {GEM_GAMES[0]})")
        if match.group(1) in NEEDS_DOWNLOAD:
            raise ConfigError(f"gem suite: {game} needs nltk's 'words' corpus, which GEM "
                              "downloads when the game starts; this suite runs offline")


@cache
def episode_family() -> ScorerFamily:
    """GEM's games as the trusted prelude of an episode's worker."""
    source = resources.files("plugins.evals.preludes").joinpath("gem_episode.py").read_text(
        encoding="utf-8")
    return ScorerFamily("gem", source, PRELOAD, exported=("GemEpisode",))


def first_prompt(observation: str) -> str:
    """The reference evaluator's prompt for a game's first observation."""
    return ("You are playing a game. Make valid actions to win.\n"
            f"Observation: {observation}\n"
            "Please reason step by step, and put your final answer within \\boxed{}.")


@dataclass
class Episode:
    """One game played once: the conversation on the host, the game in ``session``."""

    game: str
    seed: int
    session: SandboxSession | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: int = 0
    total: float = 0.0
    over: bool = False
    failed: bool = False

    @property
    def done(self) -> bool:
        return self.failed or self.over

    def fail(self) -> None:
        self.failed = True


def start(sandbox: Sandbox, episodes: list[Episode]) -> list[str | None]:
    """Open a worker per episode and start its game; the first observations (``None`` for an
    episode whose worker failed)."""
    answers = start_episodes(sandbox, episodes, EPISODE_PROGRAM, episode_family(), lambda e:
                             json.dumps({"op": "start", "game": e.game, "seed": e.seed}))
    return [None if answer is None else answer.observation for answer in answers]


def play_games(items: Sequence[EvalItem], backend: GenerationBackend, settings: EvalSettings,
               sandbox: Sandbox, max_turns: int) -> list[list[float]]:
    """Scores of ``settings.samples`` plays per item (1 won, 0 not). Episodes advance in
    lockstep: one batched ``generate`` for every episode still playing, then one batched
    sandbox call (seed ``seed + j`` for sample ``j``)."""
    scores: list[list[float]] = [[] for _ in items]
    for sample in range(settings.samples):
        episodes = [Episode(item.data["game"], item.data["seed"]) for item in items]
        try:
            for episode, item, first in zip(episodes, items, start(sandbox, episodes),
                                            strict=True):
                episode.messages = [dict(m) for m in item.prompt]
                if first is None:
                    episode.fail()
            while True:
                live = [e for e in episodes if not e.done]
                if not live:
                    break
                replies = backend.generate([list(e.messages) for e in live],
                                           max_new_tokens=settings.max_new_tokens,
                                           temperature=settings.temperature,
                                           seed=settings.seed + sample)
                moves = []
                for episode, reply in zip(live, replies, strict=True):
                    episode.messages.append({"role": "assistant", "content": reply.text})
                    episode.turns += 1
                    moves.append((episode, json.dumps({"op": "move", "text": reply.text})))
                for (episode, _), result in zip(moves, advance(sandbox, moves), strict=True):
                    if result is None:
                        continue
                    episode.total += result.reward
                    episode.messages.append({"role": "user", "content": result.observation})
                    episode.over = (result.terminated or result.truncated
                                    or episode.turns >= max_turns)
        finally:
            close_sessions(episodes)
        for index, episode in enumerate(episodes):
            won = not episode.failed and episode.total >= WIN_RETURN
            scores[index].append(1.0 if won else 0.0)
    return scores


class GemSuite(EvalSuite):
    """GEM games; each game is a bucket, its episodes the items."""

    name = "gem"

    def __init__(self, games: Sequence[str] = GEM_GAMES, episodes: int = 8, max_turns: int = 40,
                 sandbox: Sandbox | None = None) -> None:
        check_games(games)
        self.games, self.episodes, self.max_turns = list(games), episodes, max_turns
        self.sandbox = sandbox

    def _sandbox(self) -> Sandbox:
        if self.sandbox is None:
            raise ConfigError("the gem suite plays GEM's games in a sandbox; none was given to "
                              "it when it was built")
        return self.sandbox

    def items(self, limit: int | None, seed: int) -> list[EvalItem]:
        """``episodes`` games of each kind at seeds ``seed``, ``seed + 1``, ... (the reference
        seeds episode ``i`` with ``i``: seed 0 plays its games)."""
        count = min(self.episodes, per_bucket(limit, len(self.games)) or self.episodes)
        episodes = [Episode(game, seed + i) for game in self.games for i in range(count)]
        try:
            firsts = start(self._sandbox(), episodes)
        finally:
            close_sessions(episodes)
        buckets: dict[str, list[EvalItem]] = {}
        for episode, first in zip(episodes, firsts, strict=True):
            if first is None:
                raise ConfigError(
                    f"gem suite: {episode.game} did not start at seed {episode.seed} in the "
                    "sandbox (an unknown game id, or a limit: docs/eval.md gives the sandbox "
                    "limits this suite needs)")
            bucket = episode.game.removeprefix("game:")
            buckets.setdefault(bucket, []).append(EvalItem(
                id=f"{bucket}-{episode.seed}", bucket=bucket,
                prompt=({"role": "user", "content": first_prompt(first)},), text=first,
                data={"game": episode.game, "seed": episode.seed}))
        return spread(buckets, limit)

    def play(self, items: Sequence[EvalItem], backend: GenerationBackend,
             settings: EvalSettings) -> list[list[float]]:
        return play_games(items, backend, settings, self._sandbox(), self.max_turns)

    def gold(self, items: Sequence[EvalItem]) -> dict[str, tuple[str, ...]]:
        """Replies that win each game, move by move, from a scripted player that reads the
        game's state in the sandbox (empty for a game it cannot solve within its search)."""
        episodes = [Episode(item.data["game"], item.data["seed"]) for item in items]
        table: dict[str, tuple[str, ...]] = {}
        try:
            start(self._sandbox(), episodes)
            answers = ask(self._sandbox(), episodes, lambda e: json.dumps({"op": "gold"}))
            for item, answer in zip(items, answers, strict=True):
                table[first_user_text(item.prompt)] = (
                    tuple(json.loads(answer.observation)) if answer is not None else ())
        finally:
            close_sessions(episodes)
        return table


def build(options: GemSuiteOptions, context: Any) -> GemSuite:
    """The suite on a sandbox whose workers run on the gem environment (a ``ConfigError``
    naming ``spade suites install gem`` when it is missing)."""
    check_games(options.games)
    return GemSuite(list(options.games), options.episodes, options.max_turns,
                    suite_sandbox(context.components.get("sandbox"), "gem"))

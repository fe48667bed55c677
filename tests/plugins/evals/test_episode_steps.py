"""Episodes of an interactive suite played in workers of their own: one batched call for all of
them, an episode whose worker fails marked failed (and answered ``None``), scores of 0 for it, and
closing tolerates dead workers."""

from __future__ import annotations

from types import SimpleNamespace

from spade_core.errors import SandboxError
from spade_core.records import Verdict

from plugins.evals.episode_steps import ask, close_sessions, collect_scores, start_episodes


def _error(message: str) -> SandboxError:
    return SandboxError(Verdict(valid=False, category="crash", message=message))


class FakeEpisode:
    def __init__(self) -> None:
        self.session = None
        self.failed = False

    def fail(self) -> None:
        self.failed = True


class FakeSession:
    def __init__(self, name: str, dead: bool = False) -> None:
        self.name, self.dead, self.closed = name, dead, False

    def close(self) -> None:
        if self.dead:
            raise RuntimeError("worker gone")
        self.closed = True


class FakeSandbox:
    """Opens sessions named 0, 1, ...; ``refuse`` fails to open, ``broken`` fail on reset,
    ``dying`` fail on their first step. Counts batched calls."""

    def __init__(self, refuse=(), broken=(), dying=()) -> None:
        self.refuse, self.broken, self.dying = set(refuse), set(broken), set(dying)
        self.opened = 0
        self.calls: list[str] = []

    def open(self, program, family=None):
        name = str(self.opened)
        self.opened += 1
        if name in self.refuse:
            raise _error(f"worker {name} did not start")
        return FakeSession(name)

    def reset_many(self, pairs):
        self.calls.append("reset_many")
        return [_error("reset failed") if s.name in self.broken else "ok" for s, _ in pairs]

    def step_many(self, pairs):
        self.calls.append("step_many")
        return [_error("worker died") if s.name in self.dying else
                SimpleNamespace(reward=0.5, text=f"{s.name}:{r}") for s, r in pairs]


def test_start_marks_workers_that_fail_and_answers_the_rest_in_two_calls():
    sandbox = FakeSandbox(refuse={"1"}, broken={"2"})
    episodes = [FakeEpisode() for _ in range(4)]
    answers = start_episodes(sandbox, episodes, "program", None, lambda e: "hello")
    assert [e.failed for e in episodes] == [False, True, True, False]
    assert [a.text if a else None for a in answers] == ["0:hello", None, None, "3:hello"]
    assert sandbox.calls == ["reset_many", "step_many"]


def test_a_worker_dying_on_a_step_fails_its_episode_and_scores_zero():
    sandbox = FakeSandbox(dying={"1"})
    episodes = [FakeEpisode() for _ in range(3)]
    start_episodes(sandbox, [], "program", None, str)
    for episode in episodes:
        episode.session = sandbox.open("program")
    assert [a is None for a in ask(sandbox, episodes, lambda e: "move")] == [False, True, False]
    assert episodes[1].failed
    scores: list[list[float]] = [[], [], []]
    collect_scores(sandbox, episodes, [(episodes[0], "score")], scores)
    assert scores == [[0.5], [0.0], [0.0]]  # episode 2 was not scored, episode 1 is dead
    assert ask(sandbox, [episodes[1]], lambda e: "move") == [None]


def test_closing_skips_dead_workers_and_episodes_without_one():
    episodes = [FakeEpisode() for _ in range(3)]
    episodes[0].session, episodes[1].session = FakeSession("0"), FakeSession("1", dead=True)
    close_sessions(episodes)
    assert episodes[0].session.closed and not episodes[1].session.closed

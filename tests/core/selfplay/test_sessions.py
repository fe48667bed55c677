"""Batched sandbox sessions (spade_core.selfplay.sessions): failures come back as values in input
order, and an iteration's play sessions are opened, split and closed together."""

from __future__ import annotations

from types import SimpleNamespace

from spade_core.errors import SandboxError
from spade_core.records import EnvStatus
from spade_core.selfplay.sessions import PlaySessions, SessionBatch

from fakes.selfplay import FakeInProcessSandbox

PROGRAM = '''
class QAEnv:
    def reset(self, seed=None):
        return f"Question {seed}", {}

    def step(self, action):
        return "done", 1.0, True, False, {}
'''


class _CountingSandbox(FakeInProcessSandbox):
    """The fake in-process sandbox, keeping the sessions it opened and counting those closed."""

    def __init__(self):
        self.opened, self.closed = [], 0

    def open(self, program, family=None):
        session = super().open(program, family)
        session.close = lambda: setattr(self, "closed", self.closed + 1)
        self.opened.append(session)
        return session


def test_a_batch_returns_errors_as_values_in_input_order():
    with SessionBatch(FakeInProcessSandbox()) as batch:
        opened = batch.open([(PROGRAM, None, 2), ("raise ValueError('no')", None, 1)])
        assert len(opened[0]) == 2 and isinstance(opened[1], SandboxError)
        resets = batch.reset([(opened[0][0], 1), (opened[0][1], 2)])
        assert [r[0] for r in resets] == ["Question 1", "Question 2"]
        assert batch.step([]) == [] and batch.reset([]) == []
        assert batch.map(lambda x: x * 2, [1, 2, 3]) == [2, 4, 6]


def test_play_sessions_open_one_plus_rollouts_plus_hint_plays_per_playable_proposal():
    sandbox = _CountingSandbox()
    frontier = SimpleNamespace(status=EnvStatus.FRONTIER, program=PROGRAM, family=None)
    broken = SimpleNamespace(status=EnvStatus.FRONTIER, program="raise ValueError('no')",
                             family=None)
    rejected = SimpleNamespace(status=EnvStatus.REJECTED, program=PROGRAM, family=None)
    with PlaySessions(sandbox, [frontier, rejected, broken], rollouts=3, hint_plays=2) as plays:
        first, error = plays.open()
        assert isinstance(error, SandboxError)  # the broken program, in its place
        assert len(sandbox.opened) == 1 + 3 + 2 and first is sandbox.opened[0]
        unhinted, hinted = plays.rollout_sessions(0)
        assert unhinted == sandbox.opened[1:4] and hinted == sandbox.opened[4:6]
    assert sandbox.closed == 5  # the rollouts' sessions; the first is the hint step's to close

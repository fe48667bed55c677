"""The ``process`` sandbox's factory: fork servers started under the isolation chosen, ready to
open programs; an unisolated sandbox is refused unless allowed."""

from __future__ import annotations

import pytest

from sandbox.build import build_sandbox
from sandbox.options import ProcessSandboxOptions
from sandbox.process_sandbox import ProcessSandbox

PROGRAM = '''
class PingEnv:
    def reset(self, seed=None):
        return "ping", {}
    def step(self, action):
        return "pong", 1.0, True, False, {}
'''


@pytest.mark.timeout(120)
def test_the_factory_starts_ready_fork_servers_with_the_options_limits():
    box = build_sandbox(ProcessSandboxOptions(workers=1, step_seconds=2.0))
    try:
        assert isinstance(box, ProcessSandbox) and len(box.executor.servers) == 1
        assert box.isolation()["isolated"] is True
        assert box.limits.step_seconds == 2.0
        with box.open(PROGRAM) as session:
            assert session.reset(0) == ("ping", {})
    finally:
        box.close()


def test_no_isolation_without_the_opt_in():
    with pytest.raises(RuntimeError, match="allow_unisolated"):
        build_sandbox(ProcessSandboxOptions(workers=1, isolation="none"))

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


@pytest.mark.timeout(120)
def test_with_the_switch_a_sandbox_is_kept_for_the_next_run_of_the_process(monkeypatch):
    """``SPADE_KEEP_SANDBOXES=1`` (``spade experiment --workers`` sets it in its workers): the
    run's ``close()`` keeps the fork servers, the next build with the same options gets them,
    other options get their own, and ``close_kept`` (at exit) ends them all."""
    from sandbox import build

    monkeypatch.setenv(build.KEEP_SWITCH, "1")
    first = build_sandbox(ProcessSandboxOptions(workers=1))
    try:
        server = first.executor.servers[0]
        first.close()  # the end of a run
        assert server.alive()
        again = build_sandbox(ProcessSandboxOptions(workers=1))
        assert again is first
        with again.open(PROGRAM) as session:
            assert session.reset(0) == ("ping", {})
        other = build_sandbox(ProcessSandboxOptions(workers=1, step_seconds=2.0))
        assert other is not first and other.limits.step_seconds == 2.0
    finally:
        build.close_kept()
    assert not server.alive() and not build._kept
    monkeypatch.delenv(build.KEEP_SWITCH)
    plain = build_sandbox(ProcessSandboxOptions(workers=1))
    try:
        assert plain is not first and type(plain) is ProcessSandbox
    finally:
        plain.close()

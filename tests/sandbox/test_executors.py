"""The local executor's fork servers: one that dies is replaced, and the sandbox serves again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from spade_core.errors import SandboxError
from spade_core.validation import validate


@pytest.mark.timeout(120)
def test_a_dead_fork_server_is_replaced():
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    program = (Path(__file__).parent / "corpus" / "benign" / "guess_number.py").read_text()
    box = build_sandbox(ProcessSandboxOptions(workers=1))
    try:
        session = box.open(program)
        session.reset(1)
        box.executor.servers[0].proc.kill()
        box.executor.servers[0].proc.wait(timeout=10)
        # The whole pid namespace goes down with bubblewrap, asynchronously.
        deadline = time.monotonic() + 10
        with pytest.raises(SandboxError) as lost:
            while time.monotonic() < deadline:
                session.reset(1)
                time.sleep(0.05)
        assert lost.value.verdict.category == "crash"
        [verdict] = validate(box, [program])
        assert verdict.valid, verdict.message
    finally:
        box.close()

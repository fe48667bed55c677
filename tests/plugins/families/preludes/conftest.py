"""Fixtures of the preludes' tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def fresh_sandbox():
    """A fresh sandbox: a fork server keeps what any family preloaded for later programs."""
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=1, load_seconds=20, step_seconds=10,
                                              episode_seconds=30, memory_mb=1024))
    yield box
    box.close()

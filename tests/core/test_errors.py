"""spade_core/errors.py: each error's exit status, and a sandbox error that carries its verdict
and reads as its category and message."""

from __future__ import annotations

import pytest

from spade_core.errors import ConfigError, PluginError, SandboxError, SpadeError, UsageError
from spade_core.records import Verdict, VerdictCategory


@pytest.mark.parametrize("error, status", [(SpadeError, 1), (PluginError, 1), (ConfigError, 2),
                                           (UsageError, 2)])
def test_exit_statuses(error, status):
    assert issubclass(error, SpadeError) and error("x").exit_code == status


def test_a_sandbox_error_carries_its_verdict():
    verdict = Verdict(valid=False, category=VerdictCategory.TIMEOUT, message="step took 5 s")
    error = SandboxError(verdict)
    assert str(error) == "timeout: step took 5 s" and error.verdict is verdict
    assert isinstance(error, SpadeError) and error.exit_code == 1

"""The eval suites' tests that build suites through ``fakes.eval_runs.SUITES`` get the session's
real scoring sandbox (tests/conftest.py) handed to it; the others start no sandbox."""

from __future__ import annotations

import pytest

from fakes.eval_runs import SUITES


@pytest.fixture(autouse=True)
def _scoring_suites(request):
    if getattr(request.module, "SUITES", None) is SUITES:
        SUITES.sandbox = request.getfixturevalue("scoring_sandbox")

"""Fixtures of the backend tests: the transformers backend on the bundled model, loaded once for
the folder (``fakes.bundled_model``)."""

from __future__ import annotations

import pytest
from fakes.bundled_model import bundled_backend


@pytest.fixture(scope="package")
def backend():
    return bundled_backend()

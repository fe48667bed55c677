"""The export formats' options: the verifiers package name must be an import name."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plugins.exports.options import VerifiersOptions


def test_the_verifiers_package_name_is_an_import_name_and_nothing_else_is_accepted():
    assert VerifiersOptions().name is None
    assert VerifiersOptions(name="spade_run_iter3").name == "spade_run_iter3"
    for bad in ("Not-an-identifier", "3envs", "has space", ""):
        with pytest.raises(ValidationError, match="String should match pattern"):
            VerifiersOptions(name=bad)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        VerifiersOptions(nmae="x")

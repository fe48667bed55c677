"""The fork server: the libraries a family's prelude imports (``preload_imports``) load in the
server once; a missing one is named in the verdict and the server goes on serving."""

from __future__ import annotations

import pytest

from fakes.in_process import FakePartialFamily

from spade_core.errors import SandboxError


@pytest.fixture
def sandbox(two_server_sandbox):
    return two_server_sandbox


class FakeLibraryFamily(FakePartialFamily):
    """A fake family whose trusted prelude imports an installed library (``preload_imports``)."""

    name = "fake-library"
    preload_imports: tuple[str, ...] = ()

    def __init__(self, library):
        self.preload_imports = (library,)
        self.prelude = f"import {library}\nLIBRARY_NAME = {library}.__name__\n"

    def solution_actions(self, solution, tools=None):
        return [solution]


def test_preload_imports_load_in_the_server_and_a_missing_one_is_named(sandbox):
    program = ("class LibEnv:\n    def reset(self, seed=None):\n        return LIBRARY_NAME, {}\n"
               "    def step(self, action):\n        return 'x', 1.0, True, False, {}\n")
    with sandbox.open(program, family=FakeLibraryFamily("colorsys")) as session:
        assert session.reset(0)[0] == "colorsys"
    with pytest.raises(SandboxError) as caught:
        sandbox.open(program, family=FakeLibraryFamily("spade_no_such_library"))
    assert caught.value.verdict.category == "crash"
    assert "spade_no_such_library" in caught.value.verdict.message
    # The server is still serving: a family with an importable library opens again.
    with sandbox.open(program, family=FakeLibraryFamily("colorsys")) as session:
        assert session.reset(1)[0] == "colorsys"

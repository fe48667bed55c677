"""The simulated user's backend of tau2 and acebench: built once at first use and closed by the
suite; without the registry (a suite built for its items only) it says why it cannot be built.
The suites' own tests play it end to end."""

from __future__ import annotations

import pytest

from spade_core.components import BuildContext
from spade_core.config.schema import Selection
from spade_core.errors import ConfigError

from fakes.eval_backends import FakeWrongBackend
from plugins.evals.user_backend import UserBackendHolder, user_factory


class FakeClosingBackend(FakeWrongBackend):
    closed = 0

    def close(self):
        FakeClosingBackend.closed += 1


def test_built_once_at_first_use_and_closed():
    built = []
    holder = UserBackendHolder(lambda: built.append(FakeClosingBackend()) or built[-1])
    evaluated = FakeWrongBackend()
    assert holder.backend(evaluated) is holder.backend(evaluated) is built[0]
    assert len(built) == 1
    holder.close()
    holder.close()
    assert FakeClosingBackend.closed == 1
    assert UserBackendHolder(None).backend(evaluated) is evaluated


def test_no_selection_and_no_registry():
    assert user_factory(None, BuildContext(), "x") is None
    factory = user_factory(Selection(plugin="openai"), BuildContext(), "eval.options.acebench.x")
    with pytest.raises(ConfigError, match="eval.options.acebench.x: .*without the component "
                                          "registry"):
        factory()

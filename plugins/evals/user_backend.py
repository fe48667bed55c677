"""The separate generation backend an interactive suite's simulated user plays with (the
``user_backend`` option of ``tau2`` and ``acebench``): checked against the registry when the
suite is built, built at its first play (a suite built for its items only, as the contamination
guard builds it, never builds it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from spade_core.errors import ConfigError
from spade_core.interfaces import GenerationBackend

#: Builds the simulated user's backend when first needed.
UserFactory = Callable[[], GenerationBackend]


def user_factory(selection: Any, context: Any, where: str) -> UserFactory | None:
    """A builder of the backend ``selection`` names (a config ``Selection``: plugin and options),
    its plugin and options validated now; ``None`` without a selection. ``where`` names the
    option in errors (``eval.options.acebench.user_backend``)."""
    if selection is None:
        return None
    registry = getattr(context, "registry", None)
    if registry is None:  # built for its items only (the contamination guard)
        def unavailable() -> GenerationBackend:
            raise ConfigError(f"{where}: the suite was built without the component registry "
                              "here, so it cannot build a separate user backend")
        return unavailable
    component, options = resolve_user_backend(registry, selection, where)
    return lambda: component.build(options, context)


def resolve_user_backend(registry: Any, selection: Any, where: str) -> tuple[Any, Any]:
    """The registered backend ``selection`` names and its validated options; a ``ConfigError``
    saying what is wrong (an unknown plugin with the installed ones, invalid options)."""
    component = registry.resolve("generation_backend", selection.plugin, where)
    options = selection.options
    if component.options is not None:
        try:
            options = component.options.model_validate(selection.options)
        except ValidationError as exc:
            raise ConfigError(f"{where}: invalid options for backend {selection.plugin!r}: "
                              f"{exc}") from None
    return component, options


class UserBackendHolder:
    """The configured simulated user's backend of one suite: built once by the factory at first
    use, else the backend under evaluation; :meth:`close` ends what it built."""

    def __init__(self, factory: UserFactory | None) -> None:
        self.factory = factory
        self._built: GenerationBackend | None = None

    def backend(self, evaluated: GenerationBackend) -> GenerationBackend:
        if self.factory is not None:
            if self._built is None:
                self._built = self.factory()
            return self._built
        return evaluated

    def close(self) -> None:
        built, self._built = self._built, None
        if built is not None:
            built.close()

"""The limits as config options: :data:`LimitOptions`, a pydantic model with one field per
:class:`~sandbox.limits.Limits` field (same name, type, default, bounds and description).

Built from the dataclass's fields so the limits are defined once, in ``limits.py``; kept out of
that module because the fork server and its workers import it and never load pydantic. The
``process`` sandbox's options (``plugin.ProcessSandboxOptions``) inherit these fields, so they
stay flat keys under ``sandbox.options``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from sandbox.limits import Limits

#: The limit fields, in :class:`Limits` order.
LIMIT_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Limits))


class LimitOptionsBase(BaseModel):
    """What :data:`LimitOptions` adds to its generated fields: turning them into :class:`Limits`."""

    model_config = ConfigDict(extra="forbid")

    def limits(self) -> Limits:
        """These options' limits, as the host hands them to workers."""
        return Limits(**{name: getattr(self, name) for name in LIMIT_NAMES})


def _field_definitions() -> dict[str, Any]:
    hints = get_type_hints(Limits)
    return {f.name: (hints[f.name], Field(default=f.default, **f.metadata))
            for f in fields(Limits)}


#: The options model with one field per limit; subclass it to add options of your own.
LimitOptions: type[LimitOptionsBase] = create_model(
    "LimitOptions", __base__=LimitOptionsBase, __module__=__name__,
    __doc__="Resource and time limits of every environment instance (see ``Limits``).",
    **_field_definitions())

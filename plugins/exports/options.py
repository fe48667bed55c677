"""Options of the built-in export formats (docs/plugins.md: a plugin's options live in
``options.py``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class VerifiersOptions(BaseModel):
    """Options of the ``verifiers`` export format."""

    model_config = ConfigDict(extra="forbid")
    #: The package's import name (``spade envs export --name``); ``None``: ``spade_envs``.
    #: ``export_envs`` names it after the run and its latest iteration unless ``--name`` is given.
    name: str | None = Field(default=None, pattern=r"^[a-z_][a-z0-9_]*$",
                             description="the package's import name (lower case, digits, _)")

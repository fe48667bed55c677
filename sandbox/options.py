"""Options of the built-in sandboxes (config section ``sandbox``): :class:`ProcessSandboxOptions`
for ``process``, :class:`RaySandboxOptions` for ``ray``, and :data:`LimitOptions`, the limits both
inherit as flat keys.

:data:`LimitOptions` is a pydantic model with one field per :class:`~sandbox.limits.Limits` field
(same name, type, default, bounds and description), built from the dataclass's fields so the limits
are defined once, in ``limits.py``; kept out of that module because the fork server and its workers
import it and never load pydantic. Light at import: pydantic only.
"""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any, Literal, get_type_hints

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


def _default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class ProcessSandboxOptions(LimitOptions):
    """Options of the ``process`` sandbox (config section ``sandbox``): how the fork servers run,
    and every limit of :class:`sandbox.limits.Limits` as a flat key of its own (inherited from
    ``LimitOptions``, which also gives ``limits()``)."""

    model_config = ConfigDict(extra="forbid")

    workers: int = Field(default_factory=_default_workers, ge=1, le=256,
                         description="pre-warmed fork servers (each in its own bubblewrap "
                         "sandbox); sessions are spread over them. Default: one per CPU")
    isolation: Literal["auto", "bwrap", "unshare", "none"] = Field(
        default="auto", description="how to isolate the fork servers; 'auto' picks bwrap, "
        "then unshare; 'none' needs allow_unisolated")
    allow_unisolated: bool = Field(default=False, description="run programs without OS "
                                   "isolation when none is available (prints a warning on "
                                   "every run)")
    idle_workers: int = Field(default=16, ge=0, le=1024, description="workers kept after "
                              "their last instance closed, for a later open_many of the same "
                              "program (validation, then each iteration's plays), instead of a "
                              "fork each time; 0: every open_many forks a worker")


class RaySandboxOptions(LimitOptions):
    """Options of the ``ray`` sandbox (config section ``sandbox``): where the cluster is, how many
    actors run the ``process`` sandbox on each node, how lost actors and sessions are recovered,
    and every limit of :class:`sandbox.limits.Limits` (the same flat keys as ``process``)."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = Field(
        default=None, description="Ray cluster to join: 'auto' (the job's own cluster, "
        "RAY_ADDRESS or a local 'ray start'), 'HOST:PORT' or 'ray://HOST:PORT'. Default: start a "
        "local cluster (or use the one this process is already connected to)")
    num_cpus: int | None = Field(default=None, ge=1, le=4096, description="CPUs of a local "
                                 "cluster started here (default: all of this machine's)")
    actors_per_node: int | None = Field(default=None, ge=1, le=256, description="sandbox "
                                        "actors on each node. Default: one per CPU the node "
                                        "offers")
    cpus_per_actor: float = Field(default=1.0, ge=0.0, le=64.0, description="CPUs each actor "
                                  "reserves from Ray's scheduler")
    servers_per_actor: int = Field(default=1, ge=1, le=64, description="fork servers in each "
                                   "actor's process sandbox")
    actor_concurrency: int = Field(default=16, ge=1, le=1024, description="calls one actor "
                                   "serves at once; further calls wait in Ray's queue "
                                   "(back-pressure)")
    max_restarts: int = Field(default=3, ge=-1, le=1000, description="times Ray restarts a lost "
                              "actor in place (-1: without end); past that the sandbox starts "
                              "a new actor in its slot")
    max_replays: int = Field(default=2, ge=0, le=100, description="times one session may be "
                             "re-opened and its episode replayed after losing its actor; past "
                             "that it fails with the reason")
    recover_seconds: float = Field(default=120.0, gt=0, le=3600, description="how long to wait "
                                   "for a lost actor to come back before replacing it")
    isolation: Literal["auto", "bwrap", "unshare", "none"] = Field(
        default="auto", description="how each actor isolates its fork servers (as in 'process')")
    allow_unisolated: bool = Field(default=False, description="run programs without OS "
                                   "isolation when a node has none (as in 'process')")

    def process_options(self) -> dict[str, Any]:
        """The options of the ``process`` sandbox each actor runs."""
        limits = {name: getattr(self, name) for name in LIMIT_NAMES}
        return {"workers": self.servers_per_actor, "isolation": self.isolation,
                "allow_unisolated": self.allow_unisolated, **limits}

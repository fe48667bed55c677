"""The ``ray`` sandbox's options and its factory (registered by ``plugin.py``). Light at import:
Ray is imported inside :func:`build_ray_sandbox`, and selecting the sandbox without Ray
installed is a config error that says how to install it."""

from __future__ import annotations

import importlib.util
from typing import Any, Literal

from pydantic import ConfigDict, Field

from sandbox.limit_options import LIMIT_NAMES, LimitOptions

INSTALL_HINT = "pip install 'spade-rl[ray]' (ray==2.60.0)"


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


def build_ray_sandbox(options: RaySandboxOptions | None = None, context: Any = None) -> Any:
    """Connect to (or start) the Ray cluster, place the actors, and return a ready
    :class:`sandbox.ray_sandbox.RaySandbox`."""
    from spade_core.errors import ConfigError

    if importlib.util.find_spec("ray") is None:
        raise ConfigError(f"the 'ray' sandbox needs Ray, which is not installed: {INSTALL_HINT}")
    from sandbox.ray_sandbox import RaySandbox

    return RaySandbox(options or RaySandboxOptions())

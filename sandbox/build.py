"""The ``process`` sandbox's factory: registered by ``plugin.py``, and called directly by the
``ray`` sandbox's actors, the benchmarks and tests. Light at import: the fork servers and
everything heavy load inside :func:`build_sandbox`.

With ``SPADE_KEEP_SANDBOXES=1`` in the environment (``spade experiment --workers`` sets it in
its worker processes, which run one run after another), a sandbox outlives the run that built
it: its ``close()`` keeps the fork servers for the next run of the process built with the same
options, and they end with the process. A fork server's start (bubblewrap and a Python, about
0.2 s) is then paid once per process, not once per run. Workers are forked per program as
always, so runs share nothing but the servers, as the iterations of one run do."""

from __future__ import annotations

import atexit
import os
from typing import Any

from sandbox.options import ProcessSandboxOptions

#: The switch (``1``): sandboxes are kept between the runs of this process.
KEEP_SWITCH = "SPADE_KEEP_SANDBOXES"
#: Kept sandboxes by their options (JSON).
_kept: dict[str, Any] = {}


def build_sandbox(options: ProcessSandboxOptions | None = None, context: Any = None) -> Any:
    """Start the fork servers and return a ready :class:`sandbox.process_sandbox.ProcessSandbox`
    (with ``SPADE_KEEP_SANDBOXES=1``: the one an earlier run of this process kept, if any)."""
    from sandbox.executors import ForkExecutor
    from sandbox.isolation import choose
    from sandbox.process_sandbox import KeptProcessSandbox, ProcessSandbox

    options = options or ProcessSandboxOptions()
    keep = os.environ.get(KEEP_SWITCH, "").strip() == "1"
    key = options.model_dump_json()
    if keep and key in _kept:
        return _kept[key]
    launch = choose(options.isolation, options.allow_unisolated)
    executor = ForkExecutor(launch, options.workers)
    if not keep:
        return ProcessSandbox(executor, options.limits(), idle_workers=options.idle_workers)
    if not _kept:
        atexit.register(close_kept)
    box = _kept[key] = KeptProcessSandbox(executor, options.limits(),
                                          idle_workers=options.idle_workers)
    return box


def close_kept() -> None:
    """End every kept sandbox's fork servers (at the process's exit)."""
    while _kept:
        _, box = _kept.popitem()
        try:
            box.shut_down()
        except Exception:  # noqa: BLE001 - the process is ending; the servers die with it
            pass

"""Real sandboxes (and a local Ray cluster) shared by the test files of this folder: each is
started once, however many files use it. The sandboxes are session-scoped (visible in this folder
only): a pytest-xdist worker (`make test`) goes back and forth between folders, and a
package-scoped fixture would be built again each time it comes back. The Ray cluster stays
package-scoped: its tests are one unit of work (the ``ray`` xdist_group), and it ends with them."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def limited_sandbox():
    """Two fork servers with tight limits (3 s per call, 20 s per episode, 384 MB): escapes,
    hung and crashing workers, sessions by the hundred."""
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=2, load_seconds=3, reset_seconds=3,
                                              step_seconds=3, episode_seconds=20,
                                              memory_mb=384))
    yield box
    box.close()


@pytest.fixture(scope="session")
def two_server_sandbox():
    """Two fork servers with the default limits: instances sharing a worker, batched calls."""
    from sandbox.plugin import ProcessSandboxOptions, build_sandbox

    box = build_sandbox(ProcessSandboxOptions(workers=2))
    yield box
    box.close()


@pytest.fixture(scope="package")
def cluster():
    """A local Ray cluster of 2 CPUs (the ``ray`` sandbox's tests and benchmark, all in the
    ``ray`` xdist_group). A new one (``address="local"``): without an address, ``ray.init``
    joins the cluster another process started last (/tmp/ray/ray_current_cluster) if it is up,
    and refuses ``num_cpus`` there."""
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="warning")
    yield
    ray.shutdown()

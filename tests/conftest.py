"""Shared fixtures. Helpers live in ``tests/fakes/`` (importable as ``fakes``: pytest puts
``tests/`` on the path, see ``pyproject.toml``)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from fakes.cli import run_spade

# Under pytest-xdist the workers' runs (and the spade processes they start, which inherit this)
# together ask for more OpenMP threads than there are cores; spinning OpenMP threads then waste
# most of the CPU (Makefile, TEST_ENV). Set before any test imports torch in this worker.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Property-based tests (hypothesis): bounded and reproducible by default, so `make test` runs the
# same examples every time and quickly. HYPOTHESIS_PROFILE=explore searches longer, at random.
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow],
                          print_blob=True)
settings.register_profile("explore", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# `make test` runs the suite in two worker processes (pytest-xdist, ``-n 2 --dist loadgroup``).
# A unit of work is one test file, in its order, as in a single process: its module-scoped
# fixtures (a sandbox, a finished run, the data-parallel runs) are built once, not once per
# worker, and a file's tests may rely on each other's state. Tests marked
# ``pytest.mark.xdist_group(name)`` form one unit whatever file they are in: ``ray`` (every test
# that starts a Ray cluster: one cluster at a time, and none joins another's through
# /tmp/ray/ray_current_cluster), ``loads_every_core`` (the tests that start two busy processes per
# core: they run alone, see pytest_runtest_protocol below). Session-scoped fixtures are built
# once per worker; package-scoped ones once each time a worker comes back to their folder (the
# folders' conftest.py make theirs session-scoped), except in the folders of ONE_UNIT_FOLDERS,
# whose files are one unit together.
ONE_UNIT_FOLDERS = (
    "tests/plugins/report/",  # its finished run and pages (conftest.py): ~10 s to make
)
#: The longest units (a minute or more on this 2-core machine, `--durations`), handed out first so
#: that neither worker ends the run alone with one of them; the rest go largest (most tests) first.
LONGEST_FIRST = (
    "tests/plugins/trainers/test_data_parallel.py", "tests/scenarios/test_lab_scenarios.py",
    "ray", "tests/scenarios/test_selfplay_e2e.py", "tests/plugins/evals/test_bfcl_multi_turn.py",
    "tests/plugins/report/", "tests/scenarios/test_quickstart.py", "tests/scenarios/test_smoke.py",
    "tests/plugins/trainers/test_grpo.py", "tests/sandbox/test_worker.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FileOrGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # xdist_group's suffix (not a parameter)
                return nodeid.rsplit("@", 1)[-1]
            path = nodeid.split("::", 1)[0]
            return next((folder for folder in ONE_UNIT_FOLDERS if path.startswith(folder)), path)

        def _assign_work_unit(self, node) -> None:  # noqa: ANN001
            if not getattr(self, "_longest_first", False):
                self._longest_first = True
                for scope in reversed([s for s in LONGEST_FIRST if s in self.workqueue]):
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return FileOrGroupScheduling(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """In an xdist worker: the ``@group`` suffix that tells the scheduler a test's xdist_group.
    pytest-xdist 3.8.0 writes it into ``item._nodeid``, which pytest 9.2 no longer reads (node
    ids are structured, ``item._id``): the groups were silently ignored
    (pytest-dev/pytest-xdist#1386). Here it is written where this pytest reads it."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                 for mark in item.iter_markers("xdist_group")}
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture
def spade():
    return run_spade


@pytest.fixture(scope="module")
def process_sandbox():
    """The real ``process`` sandbox with its default options, one per test module (a test file
    that needs other limits defines its own fixture of this name)."""
    from spade_core.plugins import load_plugins

    box = load_plugins().registry.build("sandbox", "process", {}, "sandbox")
    yield box
    box.close()


@pytest.fixture(scope="session")
def scoring_sandbox():
    """One real process sandbox (two fork servers) shared by the eval-suite tests, which
    generate and score their items in it."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    box = build_sandbox(ProcessSandboxOptions(workers=2))
    yield box
    box.close()


@pytest.fixture(scope="session")
def known_experiment(tmp_path_factory):
    """A small experiment on the fake self-play loop, run once for the experiment page's tests
    and its browser test: the folder of the finished experiment (``results.json``,
    ``runs/<arm>/seed-<s>/``; ``fakes.experiment.run_known_experiment``)."""
    from fakes.experiment import run_known_experiment

    return run_known_experiment(tmp_path_factory.mktemp("known-experiment"))


#: The xdist_group whose tests load every core on purpose: they run alone.
ALONE = "loads_every_core"


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: the wait is no part of a timeout
def pytest_runtest_protocol(item, nextitem):
    """In an xdist worker: a test of the ``loads_every_core`` group runs while the other worker
    waits between two tests, so that its busy processes slow no other test's limits and timings
    (a sandbox's wall-clock backstop, a verdict computed in a module fixture); every other test
    may run beside any but those. Two locks in the run's temporary folder, shared by its workers:
    ``cores.lock``, shared by a test (setup, call and teardown: the fixtures it starts too) and
    exclusive for a test that runs alone, and ``cores.gate``, which a test that runs alone holds
    while it waits, so that the other worker starts no test meanwhile (else its tests, one after
    another, could keep the shared lock held until it runs out of work)."""
    basetemp = getattr(item.config.option, "basetemp", None)
    if not hasattr(item.config, "workerinput") or not basetemp:
        return (yield)
    alone = any((mark.args[0] if mark.args else mark.kwargs.get("name")) == ALONE
                for mark in item.iter_markers("xdist_group"))
    folder = Path(basetemp).parent
    with open(folder / "cores.gate", "a") as gate, open(folder / "cores.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            return (yield)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(gate, fcntl.LOCK_UN)

"""The ``ray`` sandbox on a local Ray cluster (``ray.init(num_cpus=2)``, the folder's ``cluster``):
the same verdicts and episode rewards as the ``process`` sandbox, batched calls routed per actor,
programs sent once per actor, and actors lost mid-rollout without losing or duplicating an
episode."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes.cli import ROOT
from fakes.in_process import FakePartialFamily

from spade_core.errors import SandboxError
from spade_core.plugins import load_plugins
from spade_core.validation import ValidationOptions, validate

ray = pytest.importorskip("ray")
# One Ray cluster at a time under pytest-xdist (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("ray")

CORPUS = Path(__file__).parent / "corpus"
VERDICTS = sorted((CORPUS / "verdicts").glob("*.py"))
HOSTILE = sorted((CORPUS / "hostile").glob("*.py"))
LIMITS = {"load_seconds": 4, "reset_seconds": 5, "step_seconds": 3, "episode_seconds": 30,
          "cpu_seconds": 8, "memory_mb": 384}

#: Episodes whose rewards depend on seed and actions (a hot/cold search on a line).
GAME = r'''
import random


class LineEnv:
    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self._target = self._rng.randint(0, 9)
        self.steps = 0
        return f"find the cell (seed {seed})", {}

    def step(self, action):
        self.steps += 1
        guess = int(action) if action.isdigit() else -1
        won = guess == self._target
        done = won or self.steps >= 6
        return f"{'yes' if won else 'no'} {self.steps}", float(won), done, False, {}

    def solution(self):
        return str(self._target)
'''


class KillerFamily(FakePartialFamily):
    """A trusted prelude whose helper kills the worker process it runs in."""

    name = "fake-killer"
    prelude = "import os, signal\n\n\ndef die():\n    os.kill(os.getpid(), signal.SIGKILL)\n"

    def solution_actions(self, solution, tools=None):
        return [solution] if isinstance(solution, str) else None


SUICIDE = '''
class SuicideEnv:
    def reset(self, seed=None):
        return "go", {}

    def step(self, action):
        die()
        return "never", 0.0, True, False, {}

    def solution(self):
        return "x"
'''


@pytest.fixture(scope="module")
def boxes(cluster):
    registry = load_plugins().registry
    process = registry.build("sandbox", "process", {"workers": 2, **LIMITS}, "test")
    remote = registry.build("sandbox", "ray", dict(LIMITS), "test")
    yield process, remote
    remote.close()
    process.close()


def _kill(handle, restart=True):
    """Kill an actor and wait until Ray has restarted it (or, without restart, until it is
    dead): ``ray.kill`` itself returns before the actor is gone."""
    old = ray.get(handle.hello.remote())["epoch"]
    ray.kill(handle, no_restart=not restart)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if ray.get(handle.hello.remote(), timeout=10)["epoch"] != old:
                return
        except ray.exceptions.ActorDiedError:
            if not restart:
                return
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            pass
        time.sleep(0.1)
    raise AssertionError("the actor was not killed")


def _rollout(box, programs, episodes, steps=6, kill=None):
    """Episodes of each program in lock step (``open_many`` + ``reset_many``/``step_many``):
    every step result of every episode, in order; ``kill(sessions, step)`` runs mid-way."""
    sessions = [s for p in programs for s in box.open_many(p, episodes)]
    seeds = list(range(len(sessions)))
    trace = [[("reset", r if isinstance(r, SandboxError) else r[0])]
             for r in box.reset_many(list(zip(sessions, seeds)))]
    for k in range(steps):
        if kill is not None:
            kill(sessions, k)
        results = box.step_many([(s, str((i + k) % 10)) for i, s in enumerate(sessions)])
        for row, result in zip(trace, results, strict=True):
            row.append(("error", result.verdict.category) if isinstance(result, SandboxError)
                       else (result.observation, result.reward, result.terminated))
    for s in sessions:
        s.close()
    return trace


def _tidy(trace):
    """Steps after an episode ended are the program's business; keep each episode to its end."""
    out = []
    for row in trace:
        kept = []
        for item in row:
            kept.append(item)
            if len(item) == 3 and item[2]:
                break
        out.append(kept)
    return out


def test_isolation_reports_the_actors(boxes):
    _process, remote = boxes
    info = remote.isolation()
    assert info["isolated"] is True
    assert info["ray"]["actors"] == 2  # one per CPU of the local cluster
    assert [a["isolated"] for a in info["ray"]["actor_isolation"]] == [True, True]
    assert info["rlimits"]["memory_mb"] == LIMITS["memory_mb"]


@pytest.mark.parametrize("family_name", ["reasoning", "tool-use"])
def test_seed_programs_get_the_same_verdicts_and_rewards(boxes, family_name):
    process, remote = boxes
    family = load_plugins().registry.build("env_family", family_name, {}, "test")
    sources = [p.source for p in family.seed_programs()]
    local = validate(process, sources, family=family)
    routed = validate(remote, sources, family=family)
    assert [(v.valid, v.category) for v in routed] == [(True, "ok")] * len(sources), routed
    assert [(v.valid, v.category) for v in local] == [(v.valid, v.category) for v in routed]
    assert [v.details.get("solution") for v in local] == \
        [v.details.get("solution") for v in routed]


def test_broken_contract_programs_get_the_same_verdicts(boxes):
    process, remote = boxes
    sources = [p.read_text() for p in VERDICTS]
    local = validate(process, sources)
    routed = validate(remote, sources)
    for path, a, b in zip(VERDICTS, local, routed, strict=True):
        assert (a.valid, a.category) == (b.valid, b.category), (path.name, a.message, b.message)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_hostile_programs_get_the_same_verdicts(boxes, tmp_path):
    process, remote = boxes
    sources = [p.read_text().replace("{{CANARY_DIR}}", str(tmp_path)).replace("{{PORT}}", "9")
               .replace("{{SECRET_NAME}}", "SPADE_RAY_TEST_SECRET") for p in HOSTILE]
    options = ValidationOptions(concurrency=6)
    local = validate(process, sources, options=options)
    routed = validate(remote, sources, options=options)
    differ = [(p.name, a.category, b.category, b.message[:200])
              for p, a, b in zip(HOSTILE, local, routed, strict=True)
              if (a.valid, a.category) != (b.valid, b.category)]
    assert not differ, differ
    assert not any(v.valid for v in routed)
    assert list(tmp_path.iterdir()) == []


def test_a_program_that_kills_its_worker_gets_its_verdict(boxes):
    process, remote = boxes
    verdicts = [validate(box, [SUICIDE], family=KillerFamily())[0] for box in boxes]
    assert [v.category for v in verdicts] == ["crash", "crash"], verdicts
    # the actor survived its worker: it still serves
    with remote.open(GAME) as session:
        assert session.reset(1)[0] == "find the cell (seed 1)"


def test_rollouts_match_the_process_sandbox_and_stay_batched(boxes):
    process, remote = boxes
    programs = [GAME, GAME.replace("LineEnv", "OtherLineEnv").replace("randint(0, 9)",
                                                                       "randint(0, 4)")]
    local = _rollout(process, programs, 8)
    routed = _rollout(remote, programs, 8)
    assert routed == local
    assert any(item[1] == 1.0 for row in routed for item in row[1:])  # some episodes are won
    # each program text reached each actor at most once, however often it was opened
    for stats in remote.actor_stats():
        assert all(count == 1 for count in stats["received"].values()), stats


def test_a_session_that_cannot_be_replayed_fails_with_the_reason(boxes):
    _process, remote = boxes
    session = remote.open(GAME)
    session.reset(None)  # no seed: the episode cannot be replayed elsewhere
    _kill(session.slot.handle)
    with pytest.raises(SandboxError) as lost:
        session.step("1")
    assert lost.value.verdict.category == "crash"
    assert "reset without a seed" in lost.value.verdict.message
    with pytest.raises(SandboxError):  # and it stays failed
        session.step("2")


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("restart", [True, False], ids=["restarted", "replaced"])
def test_killing_an_actor_mid_rollout_loses_and_duplicates_no_episode(boxes, restart):
    process, remote = boxes
    programs = [GAME]
    expected = _tidy(_rollout(process, programs, 12))
    killed = []

    def kill(sessions, step):
        if step == 2:  # mid-episode: 2 steps taken, 4 to go
            victim = sessions[0].slot.handle
            killed.append(sum(1 for s in sessions if s.slot.handle is victim))
            _kill(victim, restart)

    before = remote.isolation()["ray"]
    trace = _tidy(_rollout(remote, programs, 12, kill=kill))
    after = remote.isolation()["ray"]
    assert killed and killed[0] == 12  # one open_many: every episode was on the killed actor
    assert trace == expected  # every episode complete, each step result exactly once
    assert after["sessions_recovered"] - before["sessions_recovered"] >= 12
    key = "restarts" if restart else "replacements"
    assert after[key] == before[key] + 1
    assert after["actors"] == 2
    # the new actor epoch received the program once (re-sent once for the recovery)
    for stats in remote.actor_stats():
        assert all(count == 1 for count in stats["received"].values()), stats


def test_a_lost_actor_is_found_by_sessions_not_in_the_failing_call(boxes):
    _process, remote = boxes
    [a] = remote.open_many(GAME, 1)
    a.reset(5)
    first = a.step("3")
    _kill(a.slot.handle)
    second = a.step("4")  # replayed reset(5), step("3"); then step("4") once
    assert first.observation == "no 1" or first.observation == "yes 1"
    assert second.observation.endswith(" 2")
    a.close()


SLOW = '''
class SlowEnv:
    def reset(self, seed=None):
        self.n = 0
        self.seed = seed
        return f"slow {seed}", {}

    def step(self, action):
        self.n += 1
        total = 0
        for i in range(1000000):
            total += i
        return f"{action} n={self.n} seed={self.seed}", float(self.n >= 3), self.n >= 3, False, {}

    def solution(self):
        return "x"
'''


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_actor_killed_during_a_batched_call_replays_and_counts_each_step_once(boxes):
    import threading

    _process, remote = boxes
    sessions = remote.open_many(SLOW, 4)
    remote.reset_many([(s, 10 + i) for i, s in enumerate(sessions)])
    first = remote.step_many([(s, "a") for s in sessions])
    before = remote.isolation()["ray"]["sessions_recovered"]
    handle = sessions[0].slot.handle
    threading.Timer(0.1, lambda: ray.kill(handle, no_restart=False)).start()
    started = time.monotonic()
    second = remote.step_many([(s, "b") for s in sessions])  # in flight when the actor dies
    took = time.monotonic() - started
    third = remote.step_many([(s, "c") for s in sessions])
    for i, (a, b, c) in enumerate(zip(first, second, third, strict=True)):
        assert not isinstance(b, SandboxError), b.verdict
        assert a.observation == f"a n=1 seed={10 + i}"
        assert b.observation == f"b n=2 seed={10 + i}", b
        assert (c.observation, c.reward, c.terminated) == (f"c n=3 seed={10 + i}", 1.0, True)
    assert remote.isolation()["ray"]["sessions_recovered"] - before == 4
    assert took > 0.1
    for s in sessions:
        s.close()


NODE_LOSS = r'''
import json, sys
import ray
from ray.cluster_utils import Cluster
sys.path[:0] = sys.argv[1:4]  # the checkout, tests/ (for fakes), tests/sandbox/
from test_ray_sandbox import GAME
from sandbox.options import RaySandboxOptions
from sandbox.plugin import build_ray_sandbox

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
worker = cluster.add_node(num_cpus=1)
ray.init(address=cluster.address, logging_level="error")
cluster.wait_for_nodes()
box = build_ray_sandbox(RaySandboxOptions(actors_per_node=1, cpus_per_actor=0.5))
sessions = [s for _ in range(2) for s in box.open_many(GAME, 4)]
nodes = sorted({s.slot.node_id for s in sessions})
box.reset_many([(s, i) for i, s in enumerate(sessions)])
first = box.step_many([(s, "1") for s in sessions])
cluster.remove_node(worker)
second = box.step_many([(s, "2") for s in sessions])
print(json.dumps({"nodes": len(nodes), "lost": worker.node_id in nodes,
                  "first": [r.observation for r in first],
                  "second": [getattr(r, "observation", repr(r)) for r in second],
                  "ray": box.isolation()["ray"]}))
box.close()
ray.shutdown()
cluster.shutdown()
'''


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_losing_a_node_loses_no_session():
    """Two nodes (``ray.cluster_utils.Cluster``, in its own process), one actor each; the worker
    node is removed between two batched steps: its sessions go on elsewhere, each step once."""
    here = Path(__file__).parent
    done = subprocess.run([sys.executable, "-c", NODE_LOSS, str(ROOT), str(here.parent), str(here)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["nodes"] == 2 and result["lost"]
    assert [o.split()[1] for o in result["first"]] == ["1"] * 8
    assert [o.split()[1] for o in result["second"]] == ["2"] * 8, result["second"]
    assert result["ray"]["sessions_recovered"] == 4
    assert result["ray"]["actors"] == 2



def test_servers_on_another_interpreter_run_on_this_machine():
    # A suite's own environment exists on this machine only: the ray sandbox derives a local
    # process sandbox with its isolation and limits (no cluster needed), closed with it.
    from sandbox.options import RaySandboxOptions
    from sandbox.ray_sandbox import RaySandbox

    box = RaySandbox.__new__(RaySandbox)  # no actors: only the local part is exercised
    box.options, box._local = RaySandboxOptions(servers_per_actor=1, step_seconds=7.0), None
    derived = box.on_interpreter(sys.executable)
    assert box.on_interpreter(sys.executable) is derived
    assert derived.isolation()["python"] == sys.executable and derived.limits.step_seconds == 7.0
    box._local.close()
    assert not any(server.alive() for server in derived.executor.servers)

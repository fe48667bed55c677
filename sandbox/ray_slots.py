"""The actor slots of the ``ray`` sandbox (``ray_sandbox.py``): joining or starting the cluster,
placing :class:`~sandbox.ray_host.SandboxHost` actors on its nodes, picking the least loaded one,
and healing a slot whose actor was lost (Ray restarts it, or a new actor takes its place)."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

import ray
from ray.exceptions import ActorDiedError, GetTimeoutError, RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from spade_core.errors import ConfigError

from sandbox.ray_host import SandboxHost


class Slot:
    """One actor place: the actor handle (replaced when lost), its epoch and what it holds."""

    def __init__(self, index: int, node_id: str, handle: Any, epoch: str, host: str) -> None:
        self.index = index
        self.node_id = node_id
        self.handle = handle
        self.epoch = epoch
        self.host = host
        self.live = 0
        self.lock = threading.Lock()
        #: Program and family hashes sent to this epoch of the actor (set once delivered).
        self.known: dict[str, threading.Event] = {}
        self.restarts = 0
        self.replacements = 0

class ActorSlots:
    """The actor slots of one sandbox (thread-safe): where sessions are placed and healed."""

    def __init__(self, options: Any) -> None:
        """``options``: a :class:`sandbox.options.RaySandboxOptions`."""
        self.options = options
        self._lock = threading.Lock()
        self.owns_ray = False
        self.connect()
        self.remote = ray.remote(SandboxHost)
        self.slots: list[Slot] = []
        try:
            self.place()
        except BaseException:
            self.close()
            raise

    def connect(self) -> None:
        """Join the configured cluster, or start a local one (see ``address``)."""
        options = self.options
        if ray.is_initialized():
            return  # this process is already connected (e.g. a job or a test): use that cluster
        quiet = {"include_dashboard": False, "logging_level": logging.WARNING}
        if options.address is None:
            ray.init(address="local", num_cpus=options.num_cpus or os.cpu_count() or 1,
                     **quiet)
        else:
            try:
                ray.init(address=options.address, **quiet)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(f"sandbox 'ray': cannot join the Ray cluster at "
                                  f"{options.address!r}: {exc}") from None
        self.owns_ray = True

    def actor(self, node_id: str) -> Any:
        """A new actor, preferably on ``node_id``; calls are never retried by Ray (a replay
        does that, knowing what the actor had)."""
        options = self.options
        return self.remote.options(
            num_cpus=options.cpus_per_actor, max_restarts=options.max_restarts,
            max_task_retries=0, max_concurrency=options.actor_concurrency,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=True),
        ).remote(options.process_options())

    def hello(self, handle: Any, timeout: float) -> dict[str, Any]:
        """The actor's epoch and host, or the Ray error saying it is gone."""
        return ray.get(handle.hello.remote(), timeout=timeout)

    def place(self) -> None:
        """Actors on every live node: ``actors_per_node`` each, or one per CPU it offers."""
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        plan: list[str] = []
        for node in nodes:
            cpus = int(node.get("Resources", {}).get("CPU", 0))
            count = self.options.actors_per_node or cpus
            plan.extend([node["NodeID"]] * count)
        if not plan:
            raise ConfigError("sandbox 'ray': the cluster offers no CPU to place actors on; "
                              "set sandbox.options.actors_per_node")
        handles = [self.actor(node_id) for node_id in plan]
        try:
            hellos = ray.get([h.hello.remote() for h in handles],
                             timeout=self.options.recover_seconds)
        except GetTimeoutError:
            for handle in handles:
                ray.kill(handle)
            raise ConfigError(f"sandbox 'ray': {len(handles)} actors "
                              f"({self.options.cpus_per_actor:g} CPU each) did not start within "
                              f"{self.options.recover_seconds:g} s; lower actors_per_node or "
                              "cpus_per_actor") from None
        except RayActorError as exc:
            for handle in handles:
                ray.kill(handle)
            raise ConfigError(f"sandbox 'ray': an actor failed to start: {exc}") from None
        self.slots = [Slot(i, node_id, handle, hello["epoch"], hello["host"])
                      for i, (node_id, handle, hello) in enumerate(zip(plan, handles, hellos))]

    def heal(self, slot: Slot, seen: str) -> None:
        """The actor of ``slot`` failed a call made to epoch ``seen``: wait for Ray to restart
        it, or start a new actor in the slot; either way its sessions of ``seen`` are lost."""
        with slot.lock:
            if slot.epoch != seen:
                return  # another thread already healed it
            deadline = time.monotonic() + self.options.recover_seconds
            while time.monotonic() < deadline:
                try:
                    hello = self.hello(slot.handle, min(10.0, deadline - time.monotonic()))
                except ActorDiedError:
                    break  # for good (restarts used up, or killed without restart)
                except (RayActorError, GetTimeoutError):
                    time.sleep(0.1)  # restarting
                    continue
                if hello["epoch"] != seen:
                    slot.restarts += 1
                    self.renew(slot, hello)
                return
            try:
                ray.kill(slot.handle, no_restart=True)
            except (RayActorError, ValueError):
                pass
            slot.handle = self.actor(slot.node_id)  # soft affinity: elsewhere if the node is gone
            try:
                hello = self.hello(slot.handle, self.options.recover_seconds)
            except (RayActorError, GetTimeoutError) as exc:
                slot.epoch = f"lost:{seen}"  # no live actor here; its sessions fail on recovery
                raise RuntimeError(f"actor slot {slot.index} could not be replaced: {exc}") \
                    from None
            slot.replacements += 1
            self.renew(slot, hello)

    def renew(self, slot: Slot, hello: dict[str, Any]) -> None:
        """``slot`` now holds a fresh actor: nothing sent to the old one counts any more."""
        with self._lock:
            slot.epoch = hello["epoch"]
            slot.host = hello["host"]
            slot.known = {}
            slot.live = 0

    def heal_quietly(self, slot: Slot, seen: str) -> None:
        try:
            self.heal(slot, seen)
        except RuntimeError:
            pass

    def pick(self) -> Slot:
        """The least loaded slot with a live actor, counted as one session busier."""
        with self._lock:
            alive = [s for s in self.slots if not s.epoch.startswith("lost:")] or self.slots
            slot = min(alive, key=lambda s: s.live)
            slot.live += 1
            return slot

    def claim(self, slot: Slot, sha: str) -> tuple[bool, threading.Event]:
        """Whether this caller sends ``sha``'s text to ``slot`` (the first one does; the others
        wait until it has arrived and send the hash)."""
        with self._lock:
            event = slot.known.get(sha)
            if event is None:
                event = slot.known[sha] = threading.Event()
                return True, event
            return False, event

    def release_slot(self, slot: Slot, epoch: str, count: int = 1) -> None:
        with self._lock:
            if slot.epoch == epoch:
                slot.live = max(0, slot.live - count)

    def occupy(self, slot: Slot, count: int) -> None:
        """``count`` more sessions live on ``slot``."""
        with self._lock:
            slot.live += count

    def close(self) -> None:
        """Stop every actor's fork servers, let the actors go, and shut down a cluster this
        sandbox started or joined."""
        slots, self.slots = self.slots, []
        if slots:
            try:
                ray.get([s.handle.shutdown.remote() for s in slots], timeout=30)
            except (RayActorError, GetTimeoutError):
                pass
            for slot in slots:
                try:
                    ray.kill(slot.handle, no_restart=True)
                except (RayActorError, ValueError):
                    pass
        if self.owns_ray and ray.is_initialized():
            ray.shutdown()
            self.owns_ray = False

"""Fixed-pool mode: the agent trains on a given pool of environments and the designer is not asked.

``loop.pool`` is either a run directory whose memory holds imported programs (``spade envs import
PATH --run-dir DIR`` stores valid ones as ``frontier`` records) or a folder of ``.py`` programs /
a ``.jsonl`` file, validated here with the run's sandbox as ``spade envs import`` would. The pool's
environments are added to the run's own memory as ``frontier`` records; from there the loop draws
them with the same mechanism as self-play's replay (``draw_from_pool`` in environments.py), so pool
environments become mastered, too hard or retired exactly as designed ones do.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import Document, EnvRecord, EnvStatus, Verdict, program_id
from spade_core.messages import plural
from spade_core.validation import ValidationOptions, validate



@dataclass(frozen=True)
class PoolEnv:
    """One environment of the pool."""

    id: str
    source: str
    family_name: str
    description: str = ""
    doc_id: str | None = None


def _from_run_dir(path: Path, resolved: Any) -> list[PoolEnv]:
    """The ``frontier`` records of the memory in run directory ``path``, read through the run's
    own memory component (``EnvMemory.records``)."""
    rc = resolved.components["memory"]
    memory: EnvMemory = rc.component.build(rc.options, BuildContext(run_dir=path, seed=0))
    try:
        return [PoolEnv(r.id, r.source, r.family, r.description, r.doc_id)
                for r in memory.records() if r.status == EnvStatus.FRONTIER]
    finally:
        memory.close()


def _from_programs(path: Path, families: list[Any], sandbox: Any,
                   options: ValidationOptions) -> list[PoolEnv]:
    from spade_core.program_files import choose_family, read_programs

    by_family: dict[str, list[tuple[str, str, str]]] = {}
    family_of = {f.name: f for f in families}
    for label, source, description in read_programs(path):
        if source is None:
            continue
        family, _ = choose_family(source, families)
        if family is not None:
            by_family.setdefault(family.name, []).append((label, source, description))
    envs = []
    for name, items in by_family.items():
        verdicts = validate(sandbox, [source for _, source, _ in items],
                            family=family_of[name], options=options)
        for (label, source, description), verdict in zip(items, verdicts, strict=True):
            if verdict.valid:
                envs.append(PoolEnv(program_id(source), source, name, description or label,
                                    f"pool:{label}"))
    return envs


def load_pool(resolved: Any, families: list[Any], sandbox: Any) -> list[PoolEnv]:
    """The pool named by ``loop.pool``, in a stable order, restricted to the run's families."""
    raw = resolved.config.loop.pool
    path = Path(raw).expanduser()
    where = f"{resolved.source}: loop.pool {raw!r}"
    if not path.exists():
        raise ConfigError(f"{where}: no such file or folder; give a run directory filled by "
                          "`spade envs import` or a folder of .py programs / a .jsonl file")
    is_run_dir = path.is_dir() and ((path / "config.resolved.yaml").exists()
                                    or not any(path.rglob("*.py")))
    envs = _from_run_dir(path, resolved) if is_run_dir else _from_programs(
        path, families, sandbox, ValidationOptions.from_config(resolved.config))
    names = {f.name for f in families}
    usable = [e for e in envs if e.family_name in names]
    if not usable:
        have = sorted({e.family_name for e in envs})
        raise ConfigError(f"{where}: no valid environment of the run's families "
                          f"({', '.join(sorted(names))}) in the pool"
                          + (f"; it has families {', '.join(have)}" if have else ""))
    return sorted({e.id: e for e in usable}.values(), key=lambda e: e.id)


def shuffled_draw(keys: Sequence[str], count: int, draw: int, seed: int) -> list[int]:
    """Draw number ``draw`` (0-based) of the reference's fixed pool without replacement
    (``spade_rollout.py`` ``_select_static_games_without_replacement``): the keys sorted, shuffled
    once by ``random.Random(seed)``, and walked ``count`` at a time; when fewer remain than a
    draw needs, the rest is taken and the draw completed from a fresh shuffle of every key (same
    generator) without the ones just taken, whose remainder is walked next. Returns positions
    into ``keys``; every draw depends only on the seed, so a resumed run draws the same."""
    canonical = sorted(range(len(keys)), key=lambda i: keys[i])
    rng = random.Random(seed)
    remaining = list(canonical)
    rng.shuffle(remaining)
    position = 0
    selected: list[int] = []
    for _ in range(draw + 1):
        selected = remaining[position:position + count]
        position += count
        if len(selected) < count:
            refill = list(canonical)
            rng.shuffle(refill)
            taken = set(selected)
            refill = [i for i in refill if i not in taken]
            needed = count - len(selected)
            selected = selected + refill[:needed]
            remaining, position = refill[needed:], 0
    return selected


class PoolSampler:
    """The pool's environments, put into the run's memory, from which the loop draws them."""

    def __init__(self, envs: list[PoolEnv]) -> None:
        self.envs = envs

    def shuffled(self, count: int, draw: int, seed: int) -> list[str]:
        """The ids of draw number ``draw`` under ``loop.pool_order: shuffle``
        (:func:`shuffled_draw`), the pool ordered by file name as the reference orders its
        game files (an environment without one: by id)."""
        keys = [e.doc_id or e.id for e in self.envs]
        return [self.envs[i].id for i in shuffled_draw(keys, count, draw, seed)]

    def seed_memory(self, memory: EnvMemory) -> int:
        """Add the pool's environments the memory does not know yet, as ``frontier`` records."""
        added = 0
        for env in self.envs:
            if memory.get(env.id) is None:
                now = time.time()
                memory.add(EnvRecord(id=env.id, source=env.source, family=env.family_name,
                                     status=EnvStatus.FRONTIER, doc_id=env.doc_id,
                                     description=env.description, verdict_category="ok",
                                     created_at=now, updated_at=now))
                added += 1
        return added

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps: the pool's size, to refuse resuming with another pool (what
        is drawn next follows from the memory, which the checkpoint holds)."""
        return {"size": len(self.envs)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("size") != len(self.envs):
            raise ConfigError(f"loop.pool: the pool now has "
                              f"{plural(len(self.envs), 'environment')} but the "
                              f"checkpoint was taken with {state.get('size')}; resume with the "
                              "same pool")


def pool_document(env: PoolEnv | EnvRecord) -> Document:
    return Document(id=env.doc_id or f"pool:{env.id}", text=env.description, source="pool")


POOL_VERDICT = Verdict(valid=True, category="ok", message="from the fixed pool")

"""``envs export --format verifiers``: an installable package (``PACKAGE``, by default
``spade_envs``; ``spade envs export`` names it after the run) for verifiers 0.4
(``verifiers.v1``): a ``Taskset`` with one task per exported environment, an ``Env`` whose
``run()`` steps the program in spade-rl's sandbox with each agent reply, and a module-level
``load_environment(**taskset_options)``. Install with ``pip install DIR``; it needs spade-rl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugins.exports.envs import ROWS_FILE, write_jsonl

PACKAGE = "spade_envs"

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{distribution}"
version = "0.1.0"
description = "Environments exported from a spade-rl run, as a verifiers environment"
dependencies = ["verifiers==0.4.0", "spade-rl"]

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
{package} = ["environments.jsonl"]
"""

MODULE = '''"""SPADE environments exported by `spade envs export --format verifiers`.

`load_environment()` (or `vf.load_environment(SpadeEnvConfig(taskset=SpadeTasksetConfig(
id="{package}")))`) gives a verifiers environment with one task per exported program. Every
program is untrusted code: it runs only in spade-rl's sandbox (`sandbox` option, default
{sandbox!r}), each agent reply being one `step`; the episode's reward is the sum of the step
rewards (`episode_return`), the per-step rewards are in `trace.info["step_rewards"]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf

from plugins.exports.runtime import SandboxedEpisode

ROWS_PATH = Path(__file__).resolve().parent / "{rows}"


def rows(path: str | Path = ROWS_PATH) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


class SpadeTasksetConfig(vf.TasksetConfig):
    id: str = "{package}"
    rows: str = str(ROWS_PATH)
    """The exported rows (JSONL)."""
    seed: int = 0
    """Seed every environment is reset with (the task prompt shows that reset)."""
    sandbox: str = {sandbox!r}
    """spade-rl sandbox plugin the programs run in."""


class SpadeData(vf.TaskData):
    info: dict
    """The exported environment's id, seed, sandbox and program."""


class SpadeTask(vf.Task[SpadeData, vf.State, vf.TaskConfig]):
    pass


class SpadeEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()


class SpadeTaskset(vf.Taskset[SpadeTask, SpadeTasksetConfig]):
    def load(self) -> Iterator[SpadeTask]:
        for row in rows(self.config.rows):
            episode = SandboxedEpisode(row, sandbox=self.config.sandbox)
            try:
                observation = episode.reset(self.config.seed)
            finally:
                episode.close()
            yield SpadeTask(SpadeData(
                id=row["id"], name=f"{{row['family']}}-{{row['id']}}",
                description=row.get("description") or None, prompt=observation,
                system_prompt=row.get("instructions") or None,
                info={{"env_id": row["id"], "seed": self.config.seed,
                      "sandbox": self.config.sandbox, "family": row["family"],
                      "source": row["source"]}}), self.config.task)


async def play(task, player) -> tuple[list[float], object]:
    """Step the task's program with each of `player`'s replies until it is done; returns the
    step rewards and the interaction's trace."""
    info = task.data.info
    episode = SandboxedEpisode({{"id": info["env_id"], "family": info["family"],
                                "source": info["source"]}}, sandbox=info["sandbox"])
    rewards: list[float] = []
    try:
        episode.reset(info["seed"])
        async with player.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                observation, reward, done, _ = episode.step(segment.last_reply)
                rewards.append(reward)
                if done:
                    break
                segment = await interaction.turn(observation)
    finally:
        episode.close()
    return rewards, interaction.trace


class SpadeEnv(vf.Env[SpadeEnvConfig]):
    async def run(self, task, agents):
        rewards, trace = await play(task, agents.player)
        trace.record_reward("episode_return", sum(rewards), 1.0)
        trace.info["step_rewards"] = rewards


def load_environment(**taskset_options) -> vf.Env:
    """The verifiers environment over the exported rows (`taskset_options`: rows, seed,
    sandbox)."""
    from verifiers.v1.utils.loaders import load_environment as load

    return load(SpadeEnvConfig(taskset=SpadeTasksetConfig(**taskset_options)))


__all__ = ["SpadeData", "SpadeEnv", "SpadeEnvConfig", "SpadeTask", "SpadeTaskset",
           "SpadeTasksetConfig", "load_environment"]
'''


def write_package(rows: list[dict[str, Any]], out: Path, *, sandbox: str = "process",
                  package: str = PACKAGE) -> None:
    """The package ``package`` (its import name; the distribution is the same with ``-``) over
    ``rows`` into ``out``."""
    folder = out / package
    folder.mkdir()
    write_jsonl(rows, folder / ROWS_FILE)
    (folder / "__init__.py").write_text(MODULE.format(rows=ROWS_FILE, sandbox=sandbox,
                                                      package=package))
    (out / "pyproject.toml").write_text(PYPROJECT.format(package=package,
                                                         distribution=package.replace("_", "-")))
    (out / "README.md").write_text(
        f"# {package}\n\n{len(rows)} environments exported from a spade-rl run as a verifiers "
        "0.4 environment. `pip install .` (needs spade-rl: programs run in its sandbox), then "
        f"`from {package} import load_environment`, or play it with verifiers' own `vf-eval "
        f"{package}` (docs/exports.md of spade-rl).\n")

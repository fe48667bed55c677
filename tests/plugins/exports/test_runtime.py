"""Exported environments played through this project's sandbox: an episode of an exported row
plays its solution with the rewards the sandbox gives; a family not installed here, or a step
before a reset, is refused clearly."""

from __future__ import annotations

import pytest

from spade_core.errors import ConfigError

from fakes.exported_envs import SEED, ours, programs
from plugins.exports.runtime import SandboxedEpisode, shared_sandbox


def test_an_episode_of_an_exported_row_plays_its_solution_with_the_sandbox_rewards(sandbox):
    family, program = programs()[2]  # a tool-use program: several steps
    row = {"id": "x", "family": family.name, "source": program.source,
           "description": program.description}
    actions, expected = ours(sandbox, row)
    episode = SandboxedEpisode(row)
    try:
        assert episode.reset(SEED) and episode.instructions == family.agent_instructions()
        assert episode.solution_actions() == actions
        played = [episode.step(action) for action in actions]
        assert [reward for _, reward, _, _ in played] == expected
        assert played[-1][2]  # done
    finally:
        episode.close()
        shared_sandbox("process").close()


def test_a_family_not_installed_and_a_step_before_reset_are_refused():
    with pytest.raises(ConfigError, match="family 'no-such-family' is not installed here; "
                                          "installed: .*reasoning"):
        SandboxedEpisode({"id": "e1", "family": "no-such-family", "source": ""})
    family, program = programs()[0]
    episode = SandboxedEpisode({"id": "e2", "family": family.name, "source": program.source})
    with pytest.raises(RuntimeError, match="call reset"):
        episode.step("1")
    with pytest.raises(RuntimeError, match="call reset"):
        episode.solution_actions()

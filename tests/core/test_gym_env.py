"""Gymnasium compatibility: every seed environment passes ``check_env`` as a ``SandboxTextEnv``,
directly and through ``gymnasium.make``, in-process (test fake) and in the real sandbox."""

from __future__ import annotations

import warnings

import gymnasium
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from fakes.in_process import FakeInProcessSandbox, FakeInProcessSession
from spade_core.gym_env import SandboxTextEnv, UnicodeText, make_env, register_program
from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily

FAMILIES = (ReasoningFamily(), ToolUseFamily())
SEEDS = [(family, program) for family in FAMILIES for program in family.seed_programs()]
IDS = [f"{f.name}:{p.description.split(':')[0]}" for f, p in SEEDS]


def checked(env: gymnasium.Env) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a failure here
        # Without gymnasium.make there is no spec to re-make the env in other render modes.
        warnings.filterwarnings("ignore", message=".*not having a spec")
        check_env(env.unwrapped)


@pytest.mark.parametrize("family,program", SEEDS, ids=IDS)
def test_check_env_passes_for_every_seed(family, program):
    env = SandboxTextEnv(lambda: FakeInProcessSession(program.source, family))
    checked(env)
    env.close()


def test_spaces_are_text_and_accept_any_unicode():
    env = SandboxTextEnv(lambda: None)
    assert isinstance(env.observation_space, spaces.Text)
    assert isinstance(env.action_space, spaces.Text)
    assert "caf\u00e9 \u2014 \u2713 \\boxed{\u03c0}\n" in env.observation_space
    assert "" in env.observation_space and 5 not in env.observation_space
    assert "x" * (env.observation_space.max_length + 1) not in env.observation_space
    assert env.action_space.sample() in env.action_space
    assert UnicodeText(10) == UnicodeText(10) != UnicodeText(11)


def test_seeding_follows_gymnasium():
    family, program = SEEDS[0]
    env = SandboxTextEnv(lambda: FakeInProcessSession(program.source, family))
    first, info = env.reset(seed=11)
    assert info["seed"] == 11
    unseeded_a, info_a = env.reset()
    env.reset(seed=11)
    unseeded_b, info_b = env.reset()
    assert info_a["seed"] == info_b["seed"] and unseeded_a == unseeded_b
    env.close()


def test_long_observations_are_cut_and_steps_need_a_reset():
    family = ReasoningFamily()
    program = next(p for p in family.seed_programs() if p.description.startswith("grid"))
    env = SandboxTextEnv(lambda: FakeInProcessSession(program.source, family),
                         max_observation_chars=40)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("\\boxed{up}")
    observation, _ = env.reset(seed=1)
    assert len(observation) == 40 and observation.endswith("cut ...]")
    with pytest.raises(TypeError):
        env.step(3)
    env.close()


def test_render_ansi_shows_the_last_observation():
    family, program = SEEDS[0]
    env = SandboxTextEnv(lambda: FakeInProcessSession(program.source, family), render_mode="ansi")
    observation, _ = env.reset(seed=2)
    assert env.render() == observation
    with pytest.raises(ValueError, match="render_mode"):
        SandboxTextEnv(lambda: None, render_mode="human")


@pytest.mark.parametrize("family,program", SEEDS[:1] + SEEDS[-1:], ids=[IDS[0], IDS[-1]])
def test_gymnasium_make_after_register_program(family, program):
    sandbox = FakeInProcessSandbox()
    register_program("spade-test/Seed-v0", program.source, sandbox_factory=lambda: sandbox,
                     family=family, max_episode_steps=50)
    try:
        env = gymnasium.make("spade-test/Seed-v0")
        assert env.spec.max_episode_steps == 50
        observation, _ = env.reset(seed=3)
        assert observation and sandbox.opened == 1
        checked(env)
        env.close()
    finally:
        gymnasium.registry.pop("spade-test/Seed-v0", None)


def test_make_env_opens_lazily():
    family, program = SEEDS[0]
    sandbox = FakeInProcessSandbox()
    env = make_env(program.source, sandbox=sandbox, family=family)
    assert sandbox.opened == 0
    env.reset(seed=0)
    env.reset(seed=1)
    assert sandbox.opened == 1
    env.close()
    env.close()



@pytest.mark.slow
@pytest.mark.parametrize("family,program", SEEDS, ids=IDS)
def test_check_env_in_the_real_sandbox(process_sandbox, family, program):
    if "math_verify" in program.source:
        from spade_core.errors import SandboxError
        try:
            process_sandbox.open(program.source, family=family).close()
        except SandboxError as exc:
            pytest.skip(f"the sandbox does not yet make family.modules importable: {exc}")
    env = make_env(program.source, sandbox=process_sandbox, family=family)
    checked(env)
    env.close()

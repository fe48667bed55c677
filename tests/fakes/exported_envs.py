"""Test support for ``spade envs export``: the seed programs a test run holds, the rewards our
own sandbox gives for their solutions, and the export command as a user types it."""

from __future__ import annotations

from plugins.families.reasoning import ReasoningFamily
from plugins.families.tool_use import ToolUseFamily

SEED = 3


def programs():
    """Two seed programs of each family: one-step and multi-step, plain and tool-use."""
    return [(family, program) for family in (ReasoningFamily(), ToolUseFamily())
            for program in family.seed_programs()[:2]]


def ours(sandbox, row) -> tuple[list[str], list[float]]:
    """The solution's actions and the rewards our sandbox gives for them on SEED."""
    from spade_core.program_files import installed_families

    family = installed_families()[row["family"]]
    session = sandbox.open(row["source"], family=family)
    try:
        _, info = session.reset(SEED)
        actions = family.solution_actions(session.solution(), family.tools_from_info(info))
        assert actions, f"{row['description']}: no replayable solution"
        rewards = []
        for action in actions:
            result = session.step(action)
            rewards.append(float(result.reward))
            if result.terminated or result.truncated:
                break
        assert any(r > 0 for r in rewards), f"{row['description']}: the solution earns nothing"
        return actions[:len(rewards)], rewards
    finally:
        session.close()


def export(run_dir, out, fmt, *extra, command=("envs", "export")) -> int:
    """``spade envs export RUN_DIR --format FMT --out OUT ...`` in this process."""
    from spade_core.cli import main

    return main([*command, str(run_dir), "--format", fmt, "--out", str(out), *extra])

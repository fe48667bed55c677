"""The ``lab`` environment family: the curriculum lab's programs (plugins/lab/programs.py).

No skills are asked for in the designer's prompt: choosing the skill, the difficulty and the kind
is the simulated designer's own decision (its categorical policy), which is what the lab
measures."""

from __future__ import annotations

from plugins.lab.lab_backend import DESIGNER_MARK, HINT_SYSTEM
from plugins.lab.learner import Cell
from plugins.lab.programs import TEMPLATE, cell_of_program, program
from spade_core.interfaces import EnvFamily
from spade_core.records import EnvProgram


def pool_cells(skills: int, difficulties: list[float]) -> list[Cell]:
    """The fixed pool's environments: every skill at every difficulty, ordinary."""
    return [Cell(s, float(d), "ordinary") for s in range(skills) for d in difficulties]


class LabFamily(EnvFamily):
    name = "lab"

    def designer_guide(self, skill: str | None = None) -> str:
        return (f"{DESIGNER_MARK} Write one lab environment: a class whose SKILL, DIFFICULTY "
                "and KIND constants choose what it trains (docs/lab.md).")

    def skeleton(self) -> str:
        return TEMPLATE

    def agent_instructions(self) -> str:
        return "Solve the lab task and put the sum in \\boxed{}."

    def hint_instructions(self) -> str:
        return HINT_SYSTEM

    def static_problems(self, source: str) -> list[str]:
        """Only lab programs belong here: anything else is left to the other families (``spade
        envs import`` gives a program to the first installed family that accepts it)."""
        if cell_of_program(source) is None:
            return ["not a lab environment: a class with the SKILL, DIFFICULTY, KIND and NONCE "
                    "constants of plugins/lab/programs.py's template (docs/lab.md)"]
        return []

    def seed_programs(self) -> list[EnvProgram]:
        return [EnvProgram(source=program(Cell(s, 0.0), 1 + s), family=self.name)
                for s in range(2)]


#: The nonces of the fixed pool's programs (apart from any a designer numbers).
POOL_NONCE = 900_000


def pool_jsonl(skills: int = 3, difficulties: tuple[float, ...] = (
        -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0)) -> str:
    """plugins/lab/data/pool.jsonl: the fixed pool's programs, one JSON object a line."""
    import json

    from plugins.lab.programs import program

    return "".join(json.dumps({"source": program(cell, POOL_NONCE + k),
                               "description": f"skill {cell.skill}, difficulty {cell.difficulty}"})
                   + "\n" for k, cell in enumerate(pool_cells(skills, list(difficulties))))

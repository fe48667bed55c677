"""Running a program in-process under the compile policy and the runtime guards (no worker, no OS
isolation): for testing the language filter on its own."""

from __future__ import annotations

from sandbox.guards import program_globals
from sandbox.policy import CompileFailure, compile_program


def run_restricted(source: str) -> dict:
    """The globals ``source`` leaves behind, compiled by the policy and run with the guards."""
    code = compile_program(source)
    assert not isinstance(code, CompileFailure), code
    env = program_globals()
    exec(code, env)
    return env

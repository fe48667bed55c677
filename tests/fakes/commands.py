"""Helpers for the command-line tests: which heavy libraries a command imports, and a command's
help text."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fakes.cli import ROOT


HEAVY = ("torch", "transformers", "trl", "vllm", "faiss", "sentence_transformers",
         "RestrictedPython", "datasets")


def loaded_by(imports: str, watched: tuple[str, ...]) -> list[str]:
    """Which of the ``watched`` modules a fresh interpreter holds after ``import {imports}``
    (run from the checkout): the plugins' light-at-import checks."""
    code = (f"import sys, {imports}\n"
            f"print(sorted(m for m in {watched!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return eval(out.stdout.strip().splitlines()[-1])


def imported_after(args: list[str]) -> set[str]:
    code = (
        "import sys\n"
        f"sys.argv = ['spade', *{args!r}]\n"
        "from spade_core.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    return set(eval(out.stdout.strip().splitlines()[-1]))


def help_text(path: list[str]) -> str:
    import contextlib
    import io

    from spade_core.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*path, "--help"])
    return out.getvalue()

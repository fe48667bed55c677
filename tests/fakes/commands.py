"""Helpers for the command-line tests: which heavy libraries a command imports, and a command's
help text."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fakes.cli import ROOT


HEAVY = ("torch", "transformers", "trl", "vllm", "faiss", "sentence_transformers",
         "RestrictedPython", "datasets")


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

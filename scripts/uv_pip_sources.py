"""Print uv's options for the package sources pip is configured with on this machine.

uv reads none of pip's settings, so `make` passes them on: the find-links folders, index URLs and
constraint files of pip's configuration (``pip config list``: files and ``PIP_*`` variables), and,
when there is any extra source, ``--index-strategy unsafe-best-match``, which is how pip chooses
(the best version over every source, not the first source that has the package). Standard
library only: it runs before the project's environment exists. Prints nothing when pip has no
such settings (uv then uses PyPI, as pip would).

    python3 scripts/uv_pip_sources.py    # e.g. --find-links /opt/wheels --extra-index-url ...
"""

from __future__ import annotations

import shlex
import subprocess
import sys

#: pip's setting -> uv's option (each value of a setting may hold several, space-separated).
OPTIONS = {"find-links": "--find-links", "index-url": "--index-url",
           "extra-index-url": "--extra-index-url", "constraint": "--constraint"}


def pip_settings() -> list[tuple[str, str]]:
    """``(setting, value)`` of pip's configuration, in pip's order (files, then environment)."""
    try:
        listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                                capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        setting = key.rsplit(".", 1)[-1]
        if setting in OPTIONS and value:
            found.append((setting, value.strip().strip("'\"")))
    return found


def uv_options(settings: list[tuple[str, str]]) -> list[str]:
    pairs = dict.fromkeys((OPTIONS[setting], item) for setting, value in settings
                          for item in value.split())  # in order, each once
    out = [word for pair in pairs for word in pair]
    if any(s in ("find-links", "extra-index-url") for s, _ in settings):
        out += ["--index-strategy", "unsafe-best-match"]
    return out


if __name__ == "__main__":
    print(shlex.join(uv_options(pip_settings())))

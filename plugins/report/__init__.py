"""``spade report``: one self-contained HTML page (plots and an environment browser) of a run
directory, finished or still being written. The command is registered by
:mod:`plugins.report.plugin` (entry point ``report``).

Importing this package is light: :func:`build_report` is looked up on first use, and matplotlib,
jinja2, pygments, numpy and the environment memory are imported only while a report is built.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_report"]


def __getattr__(name: str) -> Any:
    """Import :mod:`plugins.report.html_report` only when ``build_report`` is asked for, so that
    loading the plugin (``spade --help`` does) costs nothing."""
    if name == "build_report":
        from plugins.report.html_report import build_report

        return build_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

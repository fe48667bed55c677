"""``spade report``: one self-contained HTML page (plots and an environment browser) of a run
directory, finished or still being written.

Importing this package is light; matplotlib, jinja2, pygments, numpy and the environment memory
are imported only while a report is built.
"""

from __future__ import annotations

from plugins.report.build import build_report

__all__ = ["build_report"]

"""An environment's nearest neighbours on its card, read from the run's memory."""

from __future__ import annotations

import re

import pytest

from fakes.report_runs import env_details as _envs


def test_neighbours_come_from_the_memory(finished_run, finished_html):
    envs = _envs(finished_run)
    duplicate = next(d for d in envs.values() if d["status"] == "duplicate")
    card = finished_html.split(f'id="env-{duplicate["id"]}"')[1].split("</details>")[0]
    neighbours = card.split("Nearest neighbours in memory")[1]
    first = re.search(r"<li>([0-9.]+) · <a href=\"#env-([0-9a-f]+)\">", neighbours)
    assert first, neighbours[:400]
    assert first.group(2) == duplicate["duplicate_of"]
    assert float(first.group(1)) == pytest.approx(duplicate["duplicate_similarity"], abs=1e-3)

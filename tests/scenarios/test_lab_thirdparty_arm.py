"""A third-party estimator package written from docs/plugins.md alone runs as an arm of the
curriculum lab, with the experiment file the page gives (one seed, two iterations here)."""

from __future__ import annotations

import json
import re

import yaml

from fakes.cli import ROOT, run_spade
from fakes.plugin_dists import make_dist

DOC = ROOT / "docs" / "plugins.md"


def test_the_documented_package_runs_as_a_lab_arm(tmp_path):
    text = DOC.read_text()
    files = {m.group(1): m.group(2) for m in
             re.finditer(r"```\w+ file=(\S+)\n(.*?)```", text, flags=re.S)}
    entry = re.search(r'^gap = "(\w+)"$', files["pyproject.toml"], flags=re.M).group(1)
    site = tmp_path / "site"
    make_dist(site, "spade-gap", "0.1.0", {"spade_gap": files["spade_gap.py"]}, {"gap": entry})
    spec = yaml.safe_load(re.search(r"```yaml lab-arm\n(.*?)```", text, flags=re.S).group(1))
    assert spec["arms"]["gap"] == {"estimator": "gap"}
    spec.update(base=str(ROOT / spec["base"]), seeds=1)
    spec["budget"]["iterations"] = 2
    path = tmp_path / "gap-in-the-lab.yaml"
    path.write_text(yaml.safe_dump(spec))
    out = tmp_path / "exp"
    result = run_spade("experiment", str(path), "--out", str(out), timeout=240,
                       env={"PYTHONPATH": str(site), "SPADE_LIVE_TABLE": "0"})
    assert result.returncode == 0, result.stderr[-2000:]
    run_dir = out / "runs" / "gap" / "seed-0"
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "completed"
    played = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    assert any(e["difficulty"] and "win_gap" in e["difficulty"]["figures"] for e in played)
    results = json.loads((out / "results.json").read_text())
    assert "gap" in json.dumps(results)

"""``spade report`` on an experiment folder: the page of a small experiment run on the fake
self-play loop (arms whose held-out success per seed is known, ``fakes/experiment.py``) holds the
table's figures, the curves per suite and bucket, the checks, the compute per arm and links to
each run's own report. The page in a browser: ``tests/scenarios/test_report_in_a_browser.py``."""

from __future__ import annotations

import copy
import json
import re

import pytest

from spade_core.cli import main
from spade_core.errors import UsageError
from plugins.report.experiment_page import (
    FALLBACK_MEASURE,
    build_experiment_page,
    is_experiment,
    measures,
    render_experiment,
    run_links,
)


@pytest.fixture(scope="module")
def page(known_experiment, tmp_path_factory):
    out = build_experiment_page(known_experiment,
                                tmp_path_factory.mktemp("page") / "experiment.html",
                                run_reports=False)
    results = json.loads((known_experiment / "results.json").read_text())
    return out.read_text(), results


def _cells(html: str) -> dict[tuple[str, str], list[str]]:
    """``{(bucket, arm): [cell text]}`` of the results table's rows."""
    rows = {}
    for bucket, arm, body in re.findall(
            r'<tr [^>]*data-bucket="([^"]*)" data-arm="([^"]*)">(.*?)</tr>', html, flags=re.S):
        rows[bucket, arm] = [re.sub(r"<[^>]+>", "", c).strip()
                             for c in re.findall(r"<td[^>]*>(.*?)</td>", body, flags=re.S)]
    return rows


def _points(x: float) -> str:
    return f"{100 * x:.1f}"


def test_the_table_holds_the_results_figures(page):
    html, results = page
    rows = _cells(html)
    table = results["table"]["suites"]["known"]
    for bucket in ("overall", "yes", "no"):
        for arm in ("ref", "good"):
            score = table[bucket]["arms"][arm]
            cells = rows[bucket, arm]
            assert cells[2] == (f"{_points(score['mean'])} [{_points(score['low'])}, "
                                f"{_points(score['high'])}]")
            assert cells[-1] == " / ".join(_points(score["per_seed"][s]) for s in "012")
        diff = table[bucket]["vs_reference"]["good"]
        assert rows[bucket, "good"][3] == (f"{100 * diff['mean']:+.1f} [{100 * diff['low']:+.1f}"
                                           f", {100 * diff['high']:+.1f}]")
        assert rows[bucket, "ref"][3] == "reference"
    # By hand (tests/core/test_experiment.py): good - ref = 1/3, 95 % interval -2.5 to +69.2.
    assert rows["overall", "good"][2:4] == ["58.3 [22.5, 94.2]", "+33.3 [-2.5, +69.2]"]
    assert rows["yes", "good"][3] == "+50.0 [+50.0, +50.0]"  # the whole interval above 0
    assert 'class="difference d-above">+50.0' in html
    # The constant answer (2 items per answer: 50 %) and each arm's overall score against it.
    assert "Constant answer: 50.0" in html and "yes 2, no 2 item(s)" in html
    assert rows["overall", "good"][4] == "+8.3 [-27.5, +44.2]"
    assert rows["overall", "ref"][4] == "-25.0 [-25.0, -25.0]"
    assert "Table at iteration 2 of 2" in html and 'id="experiment-status">complete' in html


def test_curves_per_suite_and_bucket_with_bands(page):
    html, _ = page
    for bucket in ("overall", "yes", "no"):
        figure = re.search(rf'<figure class="plot" id="curve-known-{bucket}">(.*?)</figure>',
                           html, flags=re.S)
        assert figure, bucket
        svg = figure.group(1)
        assert 'class="plot-svg"' in svg and "held-out pass@1" in svg
        assert "tokens generated (designer&#39;s included)" in svg or \
            "tokens generated (designer's included)" in svg
        assert "ref (3 seeds), reference" in svg and "good (3 seeds)" in svg
        assert svg.count('id="FillBetweenPolyCollection') + svg.count('id="PolyCollection') >= 2
        assert ("constant answer" in svg) == (bucket == "overall")
    # The curve and the table of a suite sit in one side-by-side block.
    block = html[html.index('class="side-by-side"'):html.index('class="plots bucket-curves"')]
    assert 'id="curve-known-overall"' in block and 'id="table-1"' in block


def test_checks_compute_and_run_links(page):
    html, results = page
    for key in ("same_seeds", "same_first_designs", "same_heldout_items", "budget_agrees"):
        row = re.search(rf'<tr data-check="{key}">(.*?)</tr>', html, flags=re.S).group(1)
        assert row.count(">pass<") == 4 and ">fail<" not in row  # all seeds, then seeds 0-2
    compute = re.search(r'id="compute-table">(.*?)</table>', html, flags=re.S).group(1)
    for arm in ("ref", "good"):
        runs = [r["compute"] for r in results["runs"] if r["arm"] == arm]
        designer = sum(c["tokens_designer"] for c in runs) / len(runs)
        row = re.search(rf'data-arm="{arm}">(.*?)</tr>', compute, flags=re.S).group(1)
        assert f"<td>{designer:g}</td>" in row and f"<td>{len(runs)}</td>" in row
    runs = re.findall(r'<tr data-arm="(\w+)" data-seed="(\d)">', html)
    assert sorted(runs) == sorted((r["arm"], str(r["seed"])) for r in results["runs"])


def test_a_failed_check_and_an_unstarted_run_show(page, known_experiment):
    _, results = page
    changed = copy.deepcopy(results)
    changed["checks"]["budget_agrees"] = False
    changed["checks"]["per_seed"]["1"]["budget_agrees"] = False
    changed["runs"][-1].update(iterations_completed=0, status="not started")
    runs = run_links(known_experiment, changed, known_experiment / "x.html",
                     write_reports=False, neighbours=0, max_envs=0)
    html = render_experiment(known_experiment, changed, runs)
    row = re.search(r'<tr data-check="budget_agrees">(.*?)</tr>', html, flags=re.S).group(1)
    assert row.count(">fail<") == 2 and row.count(">pass<") == 2
    assert runs[-1].href is None and runs[-1].note == "not started"
    assert '<span class="na">not started</span>' in html


def test_each_run_gets_its_own_report_linked(known_experiment, tmp_path):
    results = json.loads((known_experiment / "results.json").read_text())
    first = {**results, "runs": results["runs"][:1]}
    (link,) = run_links(known_experiment, first, known_experiment / "report.html",
                        write_reports=True, neighbours=0, max_envs=0)
    run = results["runs"][0]
    assert link.href == f"runs/{run['arm']}/seed-{run['seed']}/report.html"
    assert (known_experiment / link.href).read_text().startswith("<!DOCTYPE html>")
    # A page elsewhere links to it relative to itself.
    (far,) = run_links(known_experiment, first, tmp_path / "sub" / "page.html",
                       write_reports=False, neighbours=0, max_envs=0)
    assert (tmp_path / "sub" / far.href).resolve() == (known_experiment / link.href).resolve()


def test_measures_are_the_compute_some_arm_spent():
    def curves(compute):
        return {"s": {"overall": {"a": [{"iterations": 0, "compute": {}},
                                        {"iterations": 1, "compute": compute}]}}}

    assert measures(curves({"agent_samples": 8.0, "optimizer_steps": 0.0,
                            "tokens_total": 90.0})) == [
        ("agent_samples", "agent samples trained"),
        ("tokens_total", "tokens generated (designer's included)")]
    assert measures(curves({"agent_samples": 0.0})) == [FALLBACK_MEASURE]


def test_page_is_self_contained(page):
    html, _ = page
    assert html.startswith("<!DOCTYPE html>") and "<link" not in html
    assert not re.search(r"\bsrc\s*=", html) and "@import" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_the_cli_recognises_an_experiment_folder(known_experiment, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["report", str(known_experiment), "--out", str(out), "--no-run-reports"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert 'id="curve-known-overall"' in out.read_text()
    assert is_experiment(known_experiment)
    assert not is_experiment(known_experiment / "runs" / "ref" / "seed-0")


def test_an_experiment_without_results_yet_says_so(tmp_path):
    (tmp_path / "experiment.json").write_text("{}")
    assert is_experiment(tmp_path)
    with pytest.raises(UsageError, match="without results.json yet"):
        build_experiment_page(tmp_path)


def test_a_lab_experiment_shows_its_lab_table(page, known_experiment, tmp_path):
    import shutil

    folder = tmp_path / "lab"
    shutil.copytree(known_experiment, folder)
    _, results = page
    assert 'id="lab"' not in page[0]  # no lab.json: no lab section
    (folder / "lab.json").write_text(json.dumps({"arms": {
        "regret": {"seeds": 20, "iqm": 0.41, "iqm_ci95": [0.38, 0.45],
                   "p_improve_over_random": {"p": 0.21, "ci95": [0.1, 0.33]},
                   "kind_share": {"ordinary": 0.05, "leaky": 0.9, "noisy": 0.05},
                   "flat_from": 6, "designer_entropy": 0.25, "nonzero_update_share": 0.375,
                   "duplicates_per_window": 1.5},
        "random": {"flat_from": None, "designer_entropy": None, "nonzero_update_share": None,
                   "duplicates_per_window": 0.0, "seeds": 20, "iqm": 0.58, "iqm_ci95": [0.56, 0.6],
                   "kind_share": {"ordinary": 0.33, "leaky": 0.34, "noisy": 0.33}}}}))
    runs = run_links(folder, results, folder / "x.html", write_reports=False, neighbours=0,
                     max_envs=0)
    html = render_experiment(folder, results, runs)
    table = re.search(r'<table class="grid" id="lab-table">(.*?)</table>', html, flags=re.S)
    rows = re.findall(r'<tr data-arm="([\w-]+)">(.*?)</tr>', table.group(1), flags=re.S)
    assert [arm for arm, _ in rows] == ["random", "regret"]  # best IQM first
    assert "41.0 [38.0, 45.0]" in rows[1][1] and "0.21 [0.10, 0.33]" in rows[1][1]
    assert "<td>90.0</td>" in rows[1][1]  # the leaky share
    assert rows[1][1].endswith("<td>6</td><td>0.25</td><td>37.5</td><td>1.50</td>")
    assert rows[0][1].endswith("<td>rising</td><td>–</td><td>–</td><td>0.00</td>")


def test_first_designs_that_differ_as_expected_and_the_chosen_curves_show(page, known_experiment):
    """A lab tournament (issue 47): its first designs differ between designers as they should,
    and its curves are drawn against iterations and agent samples, not tokens."""
    _, results = page
    changed = copy.deepcopy(results)
    changed["checks"]["first_designs_differ_as_expected"] = True
    changed["checks"]["per_seed"]["1"]["first_designs_differ_as_expected"] = True
    changed["heldout"]["curves_against"] = ["iterations", "agent_samples"]
    html = render_experiment(known_experiment, changed, [])
    row = re.search(r'<tr data-check="same_first_designs">(.*?)</tr>', html, flags=re.S).group(1)
    assert row.count(">differs as expected<") == 2 and row.count(">pass<") == 2
    assert ">fail<" not in row
    svg = re.search(r'id="curve-known-overall".*?</svg>', html, flags=re.S).group(0)
    assert "agent samples trained" in svg and "tokens generated" not in svg

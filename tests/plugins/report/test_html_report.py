"""``spade report``: the page it writes of run directories (finished, in progress, odd).

Run directories come from the real self-play loop with fake components (``fakes/report_runs.py``,
the shared ones in this folder's ``conftest.py``); the browser itself is exercised in
``tests/scenarios/test_report_in_a_browser.py``.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from spade_core.cli import main
from spade_core.hookspecs import hookimpl
from plugins.report import build_report
from plugins.report.rundata import load_run

from fakes.report_runs import env_details as _envs
from fakes.report_runs import make_report_run, strip_curriculum

PLOT_IDS = ("plot-regret", "plot-counts", "plot-success", "plot-verdicts", "plot-phases",
            "plot-family-curves", "plot-family-status", "plot-family-verdicts",
            "plot-family-success")


def test_page_is_self_contained(finished_html):
    assert finished_html.startswith("<!DOCTYPE html>")
    # No external resource of any kind: no links, no src, no url() outside the SVG namespaces.
    assert "<link" not in finished_html and not re.search(r"\bsrc\s*=", finished_html)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", finished_html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "@import" not in finished_html


def test_page_holds_every_plot_and_environment(finished_run, finished_html):
    for plot_id in PLOT_IDS:
        assert f'id="{plot_id}"' in finished_html, plot_id
    assert finished_html.count('class="plot-svg"') >= len(PLOT_IDS)
    for env_id, details in _envs(finished_run).items():
        assert f'id="env-{env_id}"' in finished_html
        assert f'data-status="{details["status"]}"' in finished_html
    assert "fake-riddle" in finished_html and "fake-qa" in finished_html
    # Highlighted source (pygments), the hint, both sample trajectories.
    assert '<span class="k">class</span>' in finished_html
    assert "Think, then box the number." in finished_html
    assert "traj-unhinted" in finished_html and "traj-hinted" in finished_html


def _in_progress_copy(finished_run, tmp_path):
    """The finished run as it looked mid-iteration: no summary, a cut metrics line, an env
    program whose details are not written yet, and fields from some future plugin."""
    run_dir = tmp_path / "partial"
    shutil.copytree(finished_run, run_dir)
    (run_dir / "summary.json").unlink()
    with (run_dir / "metrics.jsonl").open("a") as fh:
        fh.write('{"iteration": 2, "envs_prop')
    (run_dir / "envs" / "feedbeeffeedbeef.py").write_text("class HalfWrittenEnv: pass\n")
    (run_dir / "envs" / "0badc0de0badc0de.json").write_text('{"id": "0badc0de')
    (run_dir / "envs" / "0badc0de0badc0de.py").write_text("")
    detail = next(run_dir.glob("envs/*.json"))
    data = json.loads(detail.read_text())
    data["checkpoint"] = "checkpoints/step-7"
    data["judge"] = {"score": 0.5, "model": "x"}
    data["hint"] = "<img src=x onerror=alert(1)> & more"  # text from a model: must stay text
    data.pop("designer_completion")
    detail.write_text(json.dumps(data))
    (run_dir / "checkpoints" / "iter-000099").mkdir(parents=True, exist_ok=True)
    return run_dir, data["id"]


def test_run_in_progress_and_unknown_fields(finished_run, tmp_path):
    run_dir, changed = _in_progress_copy(finished_run, tmp_path)
    data = load_run(run_dir)
    assert data.status == "in progress"
    assert any("metrics.jsonl line 3" in w and "still writing" in w for w in data.warnings)
    assert any("have no details yet" in w for w in data.warnings)
    assert any(w.startswith("envs/0badc0de0badc0de.json: cannot read") for w in data.warnings)
    html = build_report(run_dir, tmp_path / "r.html").read_text()
    assert "still in progress" in html and "checkpoints/step-7" in html
    assert "iter-000099" in html.split('id="checkpoints"')[1]
    assert "{&#34;model&#34;: &#34;x&#34;, &#34;score&#34;: 0.5}" in html
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; more" in html and "<img src=x" not in html
    assert 'id="env-feedbeeffeedbeef"' not in html and f'id="env-{changed}"' in html


def test_run_that_just_started(tmp_path):
    run_dir = tmp_path / "fresh"
    (run_dir / "envs").mkdir(parents=True)
    (run_dir / "config.resolved.yaml").write_text("run:\n  name: fresh\n")
    html = build_report(run_dir, tmp_path / "r.html").read_text()
    assert "No iteration has finished yet" in html and "No environment written yet" in html
    assert "no environment memory" in html


class ReportMidRun:
    """Builds the report from inside the run, when iteration 0 ends (memory open for writing)."""

    def __init__(self, out):
        self.out, self.html = out, None

    @hookimpl
    def spade_iteration_end(self, run_info, iteration, metrics):
        if iteration == 0:
            self.html = build_report(run_info.run_dir, self.out).read_text()


def test_report_while_the_run_writes(tmp_path):
    probe = ReportMidRun(tmp_path / "mid.html")
    make_report_run(tmp_path, 2, probe)
    assert probe.html is not None
    assert 'id="run-status">in progress<' in probe.html
    rows = probe.html.split('id="iterations-table"')[1].split("</table>")[0].split("<tbody>")[1]
    assert rows.count("<tr") == 1 and rows.startswith('\n<tr class="latest"><td>0</td>')
    assert "Nearest neighbours in memory" in probe.html and "<li>" in probe.html


def test_max_envs_keeps_the_latest(finished_run, tmp_path):
    html = build_report(finished_run, tmp_path / "r.html", max_envs=2).read_text()
    assert html.count('<details class="env"') == 2 and "older environment(s) left out" in html


def test_report_builds_when_the_memory_plugin_is_not_installed(finished_run, tmp_path):
    import yaml

    run_dir = tmp_path / "copy"
    shutil.copytree(finished_run, run_dir)
    config_path = run_dir / "config.resolved.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["memory"]["plugin"] = "not-installed-memory"
    config_path.write_text(yaml.safe_dump(config))
    html = build_report(run_dir, tmp_path / "r.html").read_text()
    assert "environment memory is unavailable" in html and "not-installed-memory" in html
    assert html.count('<details class="env"') == len(_envs(finished_run))


def _table(html, table_id):
    """The cells of an HTML table of the page, row by row (header first), tags stripped."""
    body = html.split(f'id="{table_id}"')[1].split("</table>")[0]
    return [[re.sub(r"<[^>]+>", "", cell).strip()
             for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S)]


def _copy(finished_run, tmp_path, name):
    return shutil.copytree(finished_run, tmp_path / name)


@pytest.fixture(scope="module")
def old_html(finished_run, tmp_path_factory):
    run_dir = strip_curriculum(_copy(finished_run, tmp_path_factory.mktemp("old"), "run"))
    return build_report(run_dir, run_dir / "report.html").read_text()


def test_skill_and_level_totals(curriculum_html):
    """Totals of fakes.report_runs.FAKE_BREAKDOWNS over both iterations; levels in numeric order."""
    assert _table(curriculum_html, "skill-table") == [
        ["skill", "proposed", "valid", "validity", "played"],
        ["arithmetic", "5", "4", "80%", "5"], ["logic", "3", "2", "67%", "2"],
        ["all", "8", "6", "75%", "7"]]
    assert _table(curriculum_html, "level-table")[1:] == [
        ["1", "3", "3", "100%", "2"], ["2", "3", "1", "33%", "3"], ["10", "2", "2", "100%", "1"],
        ["all", "8", "6", "75%", "6"]]
    assert '<a href="#skills">Per skill</a>' in curriculum_html


def _svg_texts(html, plot_id):
    figure = html.split(f'id="{plot_id}"')[1].split("</figure>")[0]
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", figure)]


def test_validity_maps_label_each_cell(curriculum_html):
    skills = _svg_texts(curriculum_html, "plot-skill-validity")
    # Cells row by row (arithmetic, logic), iterations 0 and 1: valid/proposed.
    assert [t for t in skills if "/" in t] == ["2/3", "2/2", "1/1", "1/2"]
    assert {"arithmetic", "logic", "skill", "valid share"} <= set(skills)
    levels = _svg_texts(curriculum_html, "plot-level-validity")
    assert [t for t in levels if "/" in t] == ["3/3", "0/1", "1/2", "2/2"]  # no level 10 at 0
    assert "<image" not in curriculum_html  # the colour bar is vector too


def test_memory_by_status_over_iterations(finished_run, curriculum_html):
    rows = [json.loads(line) for line in (finished_run / "metrics.jsonl").read_text().splitlines()]
    table = _table(curriculum_html, "iterations-table")
    header = table[0]
    for key, label in (("envs_replayed", "replayed"), ("envs_retired", "retired or too hard"),
                       ("frontier_size", "frontier"),
                       ("envs_mastered_total", "mastered in memory"), ("repairs", "repairs")):
        column = header.index(label)
        assert [r[column] for r in table[1:]] == [str(m[key]) for m in rows], label
    assert 'id="plot-memory-status"' in curriculum_html
    assert {"frontier", "mastered", "retired or too hard (total)",
            "replayed this iteration"} <= set(_svg_texts(curriculum_html, "plot-memory-status"))
    tile = curriculum_html.split('id="memory-tile"')[1].split("</div></div>")[0]
    last = rows[-1]
    assert f'{last["frontier_size"]} / {last["envs_mastered_total"]}' in tile


def test_a_run_from_before_the_curriculum(old_html):
    """No memory counts by status, skills, levels or repairs recorded: no such plot, column or
    table."""
    for absent in ('id="plot-memory-status"', 'id="plot-skill-validity"',
                   'id="plot-level-validity"',
                   'id="skills"', 'href="#skills"', 'id="filter-skill"', 'id="memory-tile"',
                   "<dt>skill</dt>", "<dt>repair turns</dt>", 'data-skill="arithmetic"'):
        assert absent not in old_html, absent
    header = _table(old_html, "iterations-table")[0]
    assert "frontier" not in header and "replayed" not in header and "proposed" in header
    for plot_id in PLOT_IDS:
        assert f'id="{plot_id}"' in old_html, plot_id


def test_odd_breakdowns_do_not_break_the_page(tmp_path):
    from plugins.report.html_report import breakdown_rows

    run_dir = tmp_path / "odd"
    run_dir.mkdir()
    rows = [{"iteration": 0, "skills": {"a": "many", "b": {"proposed": "3", "valid": None}},
             "levels": [1, 2]},
            {"iteration": 1, "skills": {"b": {"proposed": 2, "valid": 1, "played": True},
                                        "": {"proposed": 1, "valid": 0, "played": 1}}}]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_run(run_dir)
    assert [(r.name, r.proposed, r.valid, r.played, r.validity)
            for r in breakdown_rows(data.metrics, "skills")] == [
        ("(none)", 1, 0, 1, 0.0), ("b", 2, 1, 0, 0.5), ("all", 3, 1, 1, 1 / 3)]
    assert breakdown_rows(data.metrics, "levels") == []
    html = build_report(run_dir, tmp_path / "r.html").read_text()
    assert _table(html, "skill-table")[1:] == [["(none)", "1", "0", "0%", "1"],
                                               ["b", "2", "1", "50%", "0"],
                                               ["all", "3", "1", "33%", "1"]]
    assert 'id="level-table"' not in html and 'id="plot-level-validity"' not in html


def test_the_report_shows_how_the_hints_fared(tmp_path):
    from fakes.selfplay import FakeCheckingFamily, FakeSelfPlayPlugin, one_iteration

    # Two environments whose program answers 42 and whose hint says 7.
    plugin = FakeSelfPlayPlugin(family=FakeCheckingFamily, hint="Multiply. The answer is 7.")
    run_dir = one_iteration(tmp_path, plugin)
    html = build_report(run_dir).read_text()
    table = html.split("<th>iteration</th>", 1)[1].split("</table>", 1)[0]
    headers = re.findall(r"<th>([^<]*)</th>", table)
    cells = re.findall(r"<td>([^<]*)</td>", table.split("<tbody>", 1)[1])
    row = dict(zip(["iteration", *headers], cells))
    assert (row["hints"], row["hints redacted"], row["hints hurt"], row["hints checked"],
            row["hints contradict"]) == ("2", "0", "0", "2", "2")
    assert html.count("contradicts the solution</span>") == 2
    assert "contradicts the solution's answer yes" in html
    assert "hinted plays worse than unhinted no" in html


def test_paper_tables_of_the_latest_in_run_evaluation(finished_run, tmp_path):
    # The latest row with `eval` wins; RQ1 is shown (reasoning-gym was evaluated), RQ2 is not.
    from plugins.report.html_report import paper_tables

    rg = {"pass@1": 0.5, "items": 8, "buckets": {"math": 0.75, "logic": 0.25},
          "bucket_items": {"math": 4, "logic": 4},
          "ci95": {"overall": 0.3, "math": 0.49, "logic": 0.49}}
    old = {"pass@1": 0.1, "items": 8, "buckets": {"math": 0.1}}  # a row older than ci95
    metrics = [{"iteration": 0, "eval": {"reasoning-gym": old}}, {"iteration": 1},
               {"iteration": 2, "eval": {"reasoning-gym": rg}}, {"iteration": 3}]
    ((title, text),) = paper_tables(metrics)
    assert title.startswith("RQ1") and "iteration 2" in title
    lines = {line.split("  ")[0]: line for line in text.splitlines()}
    assert lines["RG Math"].rstrip().endswith("75.0 ± 49.0")
    assert lines["RG Logic"].rstrip().endswith("25.0 ± 49.0")
    assert lines["RG Cognition"].rstrip().endswith("n/a")
    assert lines["AIME-25"].rstrip().endswith("n/a")
    ((_, text),) = paper_tables(metrics[:2])  # no ci95 yet: the figure without an interval
    assert [line for line in text.splitlines() if line.startswith("RG Math")][0].endswith(" 10.0")
    assert paper_tables([{"iteration": 0}]) == []

    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    with (run_dir / "metrics.jsonl").open("a") as f:
        f.write(json.dumps({"iteration": 2, "eval": {"reasoning-gym": rg}}) + "\n")
    html = build_report(run_dir, tmp_path / "r.html").read_text()
    assert 'id="paper-table-1"' in html and "75.0 ± 49.0" in html
    assert "paper-table" not in build_report(finished_run, tmp_path / "p.html").read_text()


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_read_only_commands_leave_the_run_directory_as_it_was(finished_run, tmp_path):
    """`spade report` (which opens the memory for neighbours) and `spade envs export` create no
    ``memory.sqlite-wal``/``-shm`` or any other file in the run directory they read."""
    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    assert any(name.endswith("memory.sqlite") for name in _files(run_dir))
    before = _files(run_dir)
    assert main(["report", str(run_dir), "--out", str(tmp_path / "r.html")]) == 0
    assert main(["envs", "export", str(run_dir), "--format", "jsonl",
                 "--out", str(tmp_path / "export")]) == 0
    assert _files(run_dir) == before
    assert "neighbour" in (tmp_path / "r.html").read_text()


def test_a_run_that_played_nothing_is_not_a_green_completed(finished_run, tmp_path):
    run_dir = tmp_path / "nothing"
    shutil.copytree(finished_run, run_dir)
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    rows = [{**r, "envs_valid": 0, "envs_played": 0, "mean_regret": 0.0} for r in rows]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    html = build_report(run_dir, tmp_path / "r.html").read_text()
    assert "completed, nothing played</span>" in html and "status-nothing-played" in html
    assert "No iteration played any environment" in html
    assert 'last mean regret (nothing played)' in html
    played = build_report(finished_run, tmp_path / "ok.html").read_text()
    assert "nothing played" not in played and 'id="nothing-played"' not in played

"""The paper's tables (``--table rq1|rq2``): cells, deltas against a baseline, n/a for suites not
run, and the 95 % interval checked by hand on a small case; and through ``spade eval``."""

from __future__ import annotations

import json

from spade_core.cli import main
from spade_core.eval.paper_table import COLUMNS, cell, paper_table, seed_cell
from spade_core.eval.scores import summarise
from spade_core.interfaces import EvalItem

from fakes.cli import ROOT
from fakes.eval_backends import with_fake_wrong_backend

QUICKSTART = str(ROOT / "configs" / "quickstart.yaml")


_with_fake_backend = with_fake_wrong_backend


def _result(suite, per_bucket):
    items, scores = [], []
    for bucket, values in per_bucket.items():
        for i, value in enumerate(values):
            items.append(EvalItem(id=f"{bucket}/{i}", bucket=bucket))
            scores.append(value)
    return summarise(suite, items, scores, 1, 1.0)


def test_interval_by_hand():
    # Items 1, 0, 1, 1: mean 0.75, sample sd sqrt(0.25) = 0.5, half-width 1.96 * 0.5 / 2 = 0.49.
    result = _result("reasoning-gym", {"math": [[1.0], [0.0], [1.0], [1.0]]})
    mean, half, items, _ = cell([result], "reasoning-gym", "math")
    assert (mean, items) == (0.75, 4) and abs(half - 0.49) < 1e-9
    # Two samples per item: pass@1 per item is c/n (0.5 and 1.0): mean 0.75, sd 0.3536.
    result = _result("reasoning-gym", {"logic": [[1.0, 0.0], [1.0, 1.0]]})
    mean, half, _, _ = cell([result], "reasoning-gym", "logic")
    assert mean == 0.75 and abs(half - 1.96 * (0.5 ** 0.5 / 2) / 2 ** 0.5) < 1e-9


def test_interval_over_seeds_by_hand():
    # Three seeds with math pass@1 0.5, 0.75, 1.0: mean 0.75, sd 0.25,
    # half-width t(0.975, 2) * 0.25 / sqrt(3) = 4.3027 * 0.144338 = 0.62104.
    seeds = [[_result("reasoning-gym", {"math": values})]
             for values in ([[1.0], [0.0]], [[1.0], [1.0], [1.0], [0.0]], [[1.0], [1.0]])]
    mean, half, items, count = seed_cell(seeds, "reasoning-gym", "math")
    assert (mean, items, count) == (0.75, 8, 3)
    assert abs(half - 4.302653 * 0.25 / 3 ** 0.5) < 1e-6 and abs(half - 0.62104) < 1e-5
    # Two seeds 0.5 and 1.0: sd sqrt(0.125), half-width 12.7062 * 0.353553 / sqrt(2) = 3.17655.
    mean, half, _, count = seed_cell(seeds[::2], "reasoning-gym", "math")
    assert (mean, count) == (0.75, 2) and abs(half - 3.17655) < 1e-4
    # A seed without the column is left out; one seed left: its interval over items.
    alone = seed_cell([seeds[0], [_result("aime", {"2025": [[1.0]]})]], "reasoning-gym", "math")
    assert alone == cell(seeds[0], "reasoning-gym", "math") and alone.seeds == 1
    text = paper_table("rq1", seeds, seeds[:1])
    math_row = [line for line in text.splitlines() if line.startswith("RG Math")][0]
    assert "75.0 ± 62.1" in math_row and "50.0 ± 98.0" in math_row
    assert math_row.rstrip().endswith("+25.0")
    assert text.splitlines()[-1].endswith("over seeds (t-interval of per-seed means; seeds: 3)")


def test_rq1_cells_deltas_and_na():
    model = [_result("reasoning-gym", {"math": [[1.0], [1.0]], "algorithmic": [[0.0], [1.0]],
                                       "cognition": [[0.0], [0.0]], "logic": [[1.0], [0.0]]}),
             _result("aime", {"2025": [[1.0], [0.0], [0.0], [0.0]]})]
    base = [_result("reasoning-gym", {"math": [[0.0], [1.0]], "algorithmic": [[0.0], [0.0]],
                                      "cognition": [[0.0], [0.0]], "logic": [[0.0], [0.0]]})]
    text = paper_table("rq1", model, base, ("checkpoint", "baseline"))
    rows = {line.split("  ")[0]: line.split() for line in text.splitlines()[2:-1]}
    assert list(rows) == [c for c, _, _ in COLUMNS["rq1"]]
    assert "100.0 ± 0.0" in text.splitlines()[6] and text.splitlines()[6].endswith("+50.0")
    aime25 = text.splitlines()[2]
    assert "25.0 ± 49.0" in aime25 and aime25.rstrip().endswith("n/a")
    assert text.splitlines()[3].split()[-2:] == ["n/a", "n/a"]  # AIME-26 not run at all
    assert text.splitlines()[9].rstrip().endswith("+50.0")  # RG Logic: 50 % against 0 %


def test_rq2_names_the_paper_columns():
    text = paper_table("rq2", [])
    for column in ("BFCL-v4", "τ²-Retail", "τ²-Airline", "τ²-Telecom", "ACEBench Normal",
                   "ACEBench Special", "ACEBench Agent"):
        assert column in text
    assert text.count("n/a") == 8


def test_spade_eval_table_rq1_with_a_baseline(tmp_path, capsys):
    plugins = _with_fake_backend()
    out = tmp_path / "base.json"
    argv = ["eval", QUICKSTART, "--set", "backend=fake-wrong", "--suite", "reasoning-gym",
            "--limit", "4"]
    assert main([*argv, "--json", "--out", str(out)], plugins=plugins) == 0
    capsys.readouterr()
    assert json.loads(out.read_text())["suites"][0]["suite"] == "reasoning-gym"
    assert main([*argv, "--table", "rq1", "--baseline", str(out)], plugins=plugins) == 0
    text = capsys.readouterr().out
    assert "RG Math" in text and "GPQA-Diamond" in text and "delta" in text
    assert "0.0 ± 0.0" in text and "+0.0" in text


def test_spade_eval_results_of_several_seeds(tmp_path, capsys):
    # Three --out files (seeds), each holding its baseline: the table pools the seeds.
    values = ([[1.0], [0.0]], [[1.0], [1.0], [1.0], [0.0]], [[1.0], [1.0]])
    paths = []
    for seed, math in enumerate(values):
        result = _result("reasoning-gym", {"math": math})
        base = _result("reasoning-gym", {"math": [[0.0], [1.0]]})
        path = tmp_path / f"seed{seed}.json"
        path.write_text(json.dumps({"model": "m", "scored": {"checkpoint": None},
                                    "suites": [result.to_dict()],
                                    "baseline": {"source": "base", "suites": [base.to_dict()]}}))
        paths.append(str(path))
    assert main(["eval", "--table", "rq1", "--results", *paths]) == 0
    text = capsys.readouterr().out
    math_row = [line for line in text.splitlines() if line.startswith("RG Math")][0]
    # The baselines: 0.5 on every seed, sd 0, half-width 0.
    assert "75.0 ± 62.1" in math_row and "50.0 ± 0.0" in math_row and "+25.0" in math_row
    assert text.startswith("scored: m (3 result files)")
    # --baseline files replace the ones inside; a missing --table or a stray CONFIG is an error.
    assert main(["eval", "--table", "rq1", "--results", *paths, "--baseline", paths[0]]) == 0
    assert "50.0 ± 98.0" in capsys.readouterr().out
    assert main(["eval", "--results", *paths]) == 2
    assert "add --table" in capsys.readouterr().err
    assert main(["eval", QUICKSTART, "--table", "rq1", "--results", *paths]) == 2
    assert main(["eval", "--table", "rq1", "--results", str(tmp_path / "none.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_bfcl_column_is_bfcl_evals_overall_accuracy_by_hand():
    # Run: simple 1.0 (2 items), multiple 0.5 (2), live_simple 1.0 (1), live_multiple 0.0 (3),
    # irrelevance 1.0 (1), multi_turn_base 0.5 (2); nothing else. By bfcl_eval's formula:
    # non-live = mean(mean(simple, java 0, javascript 0) = 1/3, multiple .5, parallel 0, pm 0)
    #          = (1/3 + 0.5) / 4 = 0.208333; live = count-weighted over live_simple 1 item,
    # live_multiple 3 items and the two not run at their whole counts (16, 24 from the notes):
    # 1 / 44 = 0.022727; irrelevance = mean(1, live_irrelevance 0) = 0.5; multi-turn = 0.5 / 4
    # = 0.125; agentic 0. Overall 0.1 * (0.208333 + 0.022727 + 0.5) + 0.3 * 0.125 = 0.110606.
    result = _result("bfcl", {"simple": [[1.0], [1.0]], "multiple": [[1.0], [0.0]],
                              "live_simple": [[1.0]], "live_multiple": [[0.0]] * 3,
                              "irrelevance": [[1.0]], "multi_turn_base": [[1.0], [0.0]]})
    result.notes = {"category_sizes": {"live_simple": 258, "live_multiple": 1053,
                                       "live_parallel": 16, "live_parallel_multiple": 24}}
    mean, half, items, _ = cell([result], "bfcl", "overall")
    expected = 0.1 * ((1 / 3 + 0.5) / 4 + 1 / 44 + 0.5) + 0.3 * 0.125
    assert abs(mean - expected) < 1e-12 and abs(expected - 0.110606) < 1e-6 and items == 11
    # The interval from the categories with spread: multiple (w 0.025, sd 0.7071, n 2) and
    # multi_turn_base (w 0.075, same): 1.96 * sqrt(0.025^2 * 0.5 / 2 + 0.075^2 * 0.5 / 2).
    assert abs(half - 1.96 * ((0.025 ** 2 + 0.075 ** 2) * 0.25) ** 0.5) < 1e-12
    text = paper_table("rq2", [result])
    assert "BFCL-v4" in text and f"{100 * expected:.1f}" in text
    assert "non-live 20.8 (10 %), live 2.3 (10 %), irrelevance 50.0 (10 %), multi-turn 12.5 " \
           "(30 %), agentic 0.0 (40 %)" in text
    assert "simple 100.0, multiple 50.0" in text
    assert "not run (counted 0, as bfcl_eval counts them): java, javascript, parallel" in text


def test_the_run_report_shows_the_tables_bfcl_overall():
    from plugins.report.rundata import eval_cell
    from spade_core.eval.loop import row_figures

    result = _result("bfcl", {"simple": [[1.0], [1.0]], "multiple": [[1.0], [0.0]]})
    row = row_figures(result)
    assert row["pass@1"] == 0.75
    # non-live only: (mean(1, 0, 0) + 0.5) / 4 * 0.1
    assert row["table_overall"] == round(0.1 * (1 / 3 + 0.5) / 4, 4)
    assert eval_cell({"bfcl": row}, "bfcl", "overall").mean == row["table_overall"]
    plain = row_figures(_result("reasoning-gym", {"math": [[1.0], [0.0]]}))
    assert "table_overall" not in plain

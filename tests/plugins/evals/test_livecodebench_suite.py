"""The ``livecodebench`` suite on fixture problems this project wrote in LiveCodeBench's format
(stdin and functional problems, plain and compressed private tests), scored by its real scorer
in the real sandbox: gold programs pass, wrong ones fail, half-right backends score 0.5."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from spade_core.components import BuildContext
from spade_core.errors import ConfigError
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings
from spade_core.interfaces.eval_suite import first_user_text
from spade_core.testing import load_builtin_plugins, load_test_plugins

import plugins.evals.plugin as evals_plugin
from fakes.eval_backends import (
    FakeGoldBackend,
    FakeHalfBackend,
    FakeTemperatureBackend,
    FakeWrongBackend,
)
from plugins.evals.livecodebench_suite import (
    LiveCodeBenchSuite,
    extract_code,
    find_data,
    find_release,
    load_problems,
    prompt_text,
)
from plugins.evals.options import LiveCodeBenchSuiteOptions

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "livecodebench_fixture.jsonl"
GOLD = json.loads((DATA / "livecodebench_gold.json").read_text())
SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0)
#: The fixture's problems dated in 2025 (one, from 2024, lies before the dates).
DATES = {"start_date": date(2025, 1, 1), "end_date": date(2025, 4, 30)}


def _suite(box, **options) -> LiveCodeBenchSuite:
    return LiveCodeBenchSuite(str(FIXTURE), sandbox=box, **options)


def _gold(suite: LiveCodeBenchSuite) -> dict[str, tuple[str, ...]]:
    return {first_user_text(i.prompt): (GOLD[i.id.split("/", 1)[1]],) for i in suite.problems}


def test_gold_wrong_half(scoring_sandbox):
    suite = _suite(scoring_sandbox, **DATES)
    gold = _gold(suite)
    figures = []
    for backend in (FakeGoldBackend(gold), FakeWrongBackend(), FakeHalfBackend(gold)):
        result = run_suite(suite, suite.name, backend, SETTINGS, 4)
        assert result.overall.items == 4
        figures.append(result.overall.pass_at_1)
    assert figures == [1.0, 0.0, 0.5]


def test_every_kind_of_problem_is_run_against_all_its_tests(scoring_sandbox):
    suite = _suite(scoring_sandbox)
    items = {i.id: i for i in suite.items(None, 0)}
    modes = {i: items[i].data["request"]["mode"] for i in items}
    assert modes["livecodebench/spade-lcb-1"] == "stdin"
    assert modes["livecodebench/spade-lcb-3"] == "call"
    # Compressed private tests travel packed and are decoded in the worker.
    assert items["livecodebench/spade-lcb-2"].data["request"]["packed"]
    assert items["livecodebench/spade-lcb-4"].data["request"]["packed"]
    # Right on the public test, wrong on a private one: fails.
    public_only = "```python\nclass Solution:\n    def ribbonCuts(self, lengths, k):\n" \
                  "        return [5, 3]\n```"
    stdin_public_only = "```python\nprint('1 2')\nprint('3.00')\n```"
    assert suite.score_many([(items["livecodebench/spade-lcb-4"], public_only),
                             (items["livecodebench/spade-lcb-2"], stdin_public_only)]) == [0, 0]


def test_outputs_compare_as_livecodebench_compares_them(scoring_sandbox):
    suite = _suite(scoring_sandbox)
    items = {i.id: i for i in suite.items(None, 0)}
    sums, pairs = items["livecodebench/spade-lcb-1"], items["livecodebench/spade-lcb-3"]
    replies = [
        # Trailing spaces and blank lines are stripped; numbers compare as decimals.
        "```python\nn = int(input())\nprint(str(sum(map(int, input().split()))) + '.0  ')\n"
        "print()\n```",
        # sys.stdin, sys.stdout.write and a main guard.
        "```python\nimport sys\ndef main():\n    sys.stdin.readline()\n"
        "    sys.stdout.write(str(sum(map(int, sys.stdin.readline().split()))) + '\\n')\n"
        "if __name__ == '__main__':\n    main()\n```",
        # A tuple where a list is expected is accepted, as LiveCodeBench does.
        "```python\nclass Solution:\n    def tallestPair(self, heights):\n"
        "        s = sorted(heights)\n        return max(s[0] * s[1], s[-1] * s[-2])\n```",
        # An object whose __eq__ says yes to everything is not plain data: fails.
        "```python\nclass Yes:\n    def __eq__(self, other):\n        return True\n"
        "class Solution:\n    def tallestPair(self, heights):\n        return Yes()\n```",
    ]
    scores = suite.score_many([(sums, replies[0]), (sums, replies[1]), (pairs, replies[2]),
                               (pairs, replies[3])])
    assert scores == [1.0, 1.0, 1.0, 0.0]


def test_a_test_over_test_seconds_fails(scoring_sandbox):
    suite = _suite(scoring_sandbox, test_seconds=0.05)
    item = next(i for i in suite.items(None, 0) if i.id == "livecodebench/spade-lcb-1")
    slow = ("```python\nx = 0\nfor i in range(3_000_000):\n    x += i\n"
            "n = int(input())\nprint(sum(map(int, input().split())))\n```")
    assert suite.score_many([(item, slow)]) == [0.0]
    assert _suite(scoring_sandbox).score_many([(item, slow)]) == [1.0]


def test_the_dates_filter_by_contest_date():
    everything = load_problems(FIXTURE)
    kept = load_problems(FIXTURE, DATES["start_date"], DATES["end_date"])
    assert len(everything) == 5
    assert sorted(i.id for i in kept) == [f"livecodebench/spade-lcb-{n}" for n in (1, 2, 3, 4)]
    assert [i.data["contest_date"][:4] for i in kept] == ["2025"] * 4


def test_items_are_fixed_for_a_seed_and_cover_every_difficulty(scoring_sandbox):
    suite = _suite(scoring_sandbox)
    first = [i.id for i in suite.items(3, 7)]
    assert first == [i.id for i in _suite(scoring_sandbox).items(3, 7)]
    assert {i.bucket for i in suite.items(3, 7)} == {"easy", "medium", "hard"}


def test_prompt_and_extraction_follow_livecodebench():
    assert "### Format: You will use the following starter code" in prompt_text("Q", "class S:")
    assert "Read the inputs from stdin" in prompt_text("Q", "")
    reply = "x\n```python\nprint(1)\n```\ntext\n```python\nprint(2)\n```\n"
    assert extract_code(reply) == "print(2)"
    assert extract_code("no code here") == ""


def test_missing_data_fails_naming_the_file(tmp_path):
    missing = tmp_path / "test6.jsonl"
    with pytest.raises(ConfigError, match=str(missing)) as error:
        find_data(str(missing))
    assert "livecodebench/code_generation_lite" in str(error.value)
    with pytest.raises(ConfigError, match="no test6.jsonl under"):
        find_data(str(tmp_path))
    with pytest.raises(ConfigError, match="eval.data.livecodebench"):
        find_data(None)
    (tmp_path / "snapshots" / "abc").mkdir(parents=True)
    (tmp_path / "snapshots" / "abc" / "test6.jsonl").write_text(FIXTURE.read_text())
    assert find_data(str(tmp_path)).name == "test6.jsonl"


def test_malformed_rows_fail_naming_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(FIXTURE.read_text().splitlines()[0] + "\n{\"question_id\": 1}\n")
    with pytest.raises(ConfigError, match=f"{bad}:2"):
        load_problems(bad)
    bad.write_text(json.dumps({"question_id": "q", "question_content": "c",
                               "public_test_cases": "not json!"}) + "\n")
    with pytest.raises(ConfigError, match="neither a JSON list"):
        load_problems(bad)


def test_registered_with_its_options(scoring_sandbox):
    loaded = load_test_plugins(evals_plugin)
    assert "livecodebench" in loaded.registry.names("eval_suite")
    with pytest.raises(ConfigError, match="no data file"):
        loaded.registry.build("eval_suite", "livecodebench", {}, "test",
                              BuildContext(components={"sandbox": scoring_sandbox}))
    suite = loaded.registry.build("eval_suite", "livecodebench", {"data": str(FIXTURE)}, "test",
                                  BuildContext(components={"sandbox": scoring_sandbox}))
    assert len(suite.items(None, 0)) == 5
    with pytest.raises(ValueError):
        LiveCodeBenchSuiteOptions(data=str(FIXTURE), release="v7")
    assert LiveCodeBenchSuiteOptions().test_seconds == 6.0


def test_spade_eval_runs_the_suite_on_the_fixture(capsys, scoring_sandbox):
    from spade_core.cli import main
    from spade_core.hookspecs import hookimpl

    from fakes.cli import ROOT

    suite = _suite(scoring_sandbox, **DATES)
    backend = FakeGoldBackend(_gold(suite))

    class FakeBackendPlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-gold", lambda options, context: backend)

    args = ["eval", str(ROOT / "configs" / "quickstart.yaml"), "--suite", "livecodebench",
            "--set", "backend=fake-gold", "--option", f"livecodebench.data={FIXTURE}",
            "--option", "livecodebench.start_date=2025-01-01", "--json"]
    assert main(args, plugins=load_builtin_plugins(FakeBackendPlugin())) == 0
    (result,) = json.loads(capsys.readouterr().out)["suites"]
    assert result["overall"]["pass_at_1"] == 1.0
    assert sorted(i["id"] for i in result["items"]) == [
        f"livecodebench/spade-lcb-{n}" for n in (1, 2, 3, 4)]


def _release_folder(folder: Path, files: tuple[str, ...]) -> None:
    """One fixture problem per file, each with an id of its own (as the releases add them)."""
    row = json.loads(FIXTURE.read_text().splitlines()[0])
    for index, name in enumerate(files):
        (folder / name).write_text(json.dumps(dict(row, question_id=f"r{index}")) + "\n")


def test_a_release_reads_its_files_and_names_the_missing_ones(tmp_path):
    every = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl",
             "test6.jsonl")
    with pytest.raises(ConfigError) as error:
        find_release(str(tmp_path), "release_v6")
    assert f"test.jsonl, test2.jsonl, test3.jsonl, test4.jsonl, test5.jsonl, test6.jsonl not " \
           f"found under {tmp_path}" in str(error.value)
    assert "livecodebench/code_generation_lite" in str(error.value)
    _release_folder(tmp_path, tuple(f for f in every if f != "test3.jsonl"))
    with pytest.raises(ConfigError, match="test3.jsonl not found under .*release_v6 reads "
                                          "test.jsonl, test2.jsonl, test3.jsonl"):
        find_release(str(tmp_path), "release_v6")
    _release_folder(tmp_path, every)
    suite = LiveCodeBenchSuite(str(tmp_path), release="release_v6")
    assert sorted(i.id for i in suite.problems) == [f"livecodebench/r{n}" for n in range(6)]
    assert suite.notes["files"] == list(every)
    # The file a user named: its folder's files are read; vN is the one file release N added.
    assert len(LiveCodeBenchSuite(str(tmp_path / "test6.jsonl"), release="release_v3")
               .problems) == 3
    [only] = LiveCodeBenchSuite(str(tmp_path), release="v6").problems
    assert only.id == "livecodebench/r5"


def test_temperature_option_sets_the_replies_temperature(scoring_sandbox):
    backend = FakeTemperatureBackend()
    run_suite(_suite(scoring_sandbox, temperature=0.2), "livecodebench", backend, SETTINGS, 2)
    assert backend.temperatures == [0.2]
    run_suite(_suite(scoring_sandbox), "livecodebench", backend, SETTINGS, 2)
    assert backend.temperatures == [0.2, SETTINGS.temperature]

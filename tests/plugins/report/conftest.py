"""The report tests' shared runs, each made once for the folder: a finished run of the fake
self-play loop, its page, and its page with the curriculum's records added."""

from __future__ import annotations

import shutil

import pytest

from plugins.report import build_report

from fakes.report_runs import add_curriculum, make_report_run


@pytest.fixture(scope="package")
def finished_run(tmp_path_factory):
    return make_report_run(tmp_path_factory.mktemp("finished"))


@pytest.fixture(scope="package")
def finished_html(finished_run, tmp_path_factory):
    out = build_report(finished_run, tmp_path_factory.mktemp("out") / "report.html")
    return out.read_text()


@pytest.fixture(scope="package")
def curriculum_html(finished_run, tmp_path_factory):
    run_dir = add_curriculum(shutil.copytree(finished_run,
                                             tmp_path_factory.mktemp("curriculum") / "run"))
    return build_report(run_dir, run_dir / "report.html").read_text()

"""The report in a real browser: Debian's headless Chromium, driven by playwright-python.

Every page is opened from disk with all non-file requests refused (the page must need no
network), and must render its plots and environment browser without a console error. Screenshots
are saved under each test's temporary directory (the experiment page's is also copied to
``/tmp/experiment_page.png``, for a person to look at).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from plugins.report import build_report

from fakes.report_runs import make_report_run

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed; `make setup` installs it when run as root "
           "(apt-get install -y chromium)")]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class BrowserPage:
    """One page in a fresh Chromium profile, recording console errors and network attempts."""

    def __init__(self, context):
        self.context = context
        self.page = context.new_page()
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def open(self, path: Path) -> "BrowserPage":
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        return self

    def visible_envs(self) -> list[dict]:
        return self.page.eval_on_selector_all(
            "#env-list details.env:not(.hidden)",
            "els => els.map(e => ({id: e.id, status: e.dataset.status,"
            " family: e.dataset.family, regret: e.dataset.regret}))")


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="playwright-python is not installed (pip install -e '.[dev]')")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1000})
        blocked: list[str] = []

        def refuse_network(route):
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                blocked.append(route.request.url)
                route.abort()

        context.route("**/*", refuse_network)
        context.blocked = blocked
        yield context
        context.close()


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    run_dir = make_report_run(tmp_path_factory.mktemp("run"))
    return run_dir, build_report(run_dir, run_dir / "report.html")


@pytest.fixture
def browser(browser_context):
    page = BrowserPage(browser_context)
    yield page
    page.page.close()
    assert not browser_context.blocked, f"the page tried the network: {browser_context.blocked}"


def _not_blank(png: Path) -> None:
    from PIL import Image

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50, f"{png} looks blank"


def test_plots_and_browser_render(finished, browser, tmp_path):
    run_dir, report = finished
    browser.open(report)
    plots = browser.page.eval_on_selector_all(
        "svg.plot-svg", "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {w: r.width, h: r.height, paths: e.querySelectorAll('path').length,"
        " texts: e.querySelectorAll('text').length}; })")
    assert len(plots) >= 9
    for plot in plots:
        assert plot["w"] > 200 and plot["h"] > 100 and plot["paths"] > 5 and plot["texts"] > 3
    env_ids = {p.stem for p in run_dir.glob("envs/*.json")}
    assert {e["id"] for e in browser.visible_envs()} == {f"env-{i}" for i in env_ids}
    assert browser.page.inner_text("#env-shown") == str(len(env_ids))
    assert "completed" in browser.page.inner_text("#run-status")
    shot = tmp_path / "report.png"
    browser.page.screenshot(path=str(shot), full_page=True)
    _not_blank(shot)
    assert not browser.errors, browser.errors


def test_filter_sort_and_open_an_environment(finished, browser, tmp_path):
    run_dir, report = finished
    details = [json.loads(p.read_text()) for p in run_dir.glob("envs/*.json")]
    browser.open(report)
    page = browser.page
    page.select_option("#filter-status", "mastered")
    shown = browser.visible_envs()
    assert shown and {e["status"] for e in shown} == {"mastered"}
    assert len(shown) == sum(d["status"] == "mastered" for d in details)
    page.select_option("#filter-status", "")
    page.select_option("#filter-family", "fake-riddle")
    assert {e["family"] for e in browser.visible_envs()} == {"fake-riddle"}
    page.select_option("#filter-family", "")
    page.select_option("#sort-by", "regret:asc")
    regrets = [float(e["regret"]) for e in browser.visible_envs() if e["regret"]]
    assert regrets == sorted(regrets) and len(set(regrets)) > 1
    page.select_option("#sort-by", "regret:desc")
    regrets = [float(e["regret"]) for e in browser.visible_envs() if e["regret"]]
    assert regrets == sorted(regrets, reverse=True)
    page.fill("#filter-text", "too_hard")
    assert [e["status"] for e in browser.visible_envs()] == ["too_hard"]
    page.fill("#filter-text", "")
    # Open the duplicate, then follow its nearest neighbour: the mastered one it duplicates.
    duplicate = next(d for d in details if d["status"] == "duplicate")
    card = page.locator(f"#env-{duplicate['id']}")
    card.locator("summary").first.click()
    assert card.evaluate("e => e.open")
    assert card.locator(".code .k").count() > 3  # highlighted keywords
    card.locator("ul.neighbours a").first.click()
    target = page.locator(f"#env-{duplicate['duplicate_of']}")
    assert target.evaluate("e => e.open")
    assert target.locator(".traj-unhinted .turn").count() >= 2
    assert target.locator(".traj-hinted").inner_text().count("HINT:") == 1
    shot = tmp_path / "environment.png"
    target.screenshot(path=str(shot))
    _not_blank(shot)
    assert not browser.errors, browser.errors


def test_run_in_progress_renders(finished, browser, tmp_path):
    run_dir = tmp_path / "partial"
    shutil.copytree(finished[0], run_dir)
    (run_dir / "summary.json").unlink()
    with (run_dir / "metrics.jsonl").open("a") as fh:
        fh.write('{"iteration": 2, "envs_')
    report = build_report(run_dir, tmp_path / "partial.html")
    browser.open(report)
    assert browser.page.inner_text("#run-status") == "in progress"
    assert browser.page.locator("svg.plot-svg").count() >= 9
    browser.page.screenshot(path=str(tmp_path / "in-progress.png"))
    assert not browser.errors, browser.errors


def test_an_empty_run_renders(browser, tmp_path):
    run_dir = tmp_path / "fresh"
    (run_dir / "envs").mkdir(parents=True)
    report = build_report(run_dir, tmp_path / "fresh.html")
    browser.open(report)
    assert "No iteration has finished yet" in browser.page.inner_text("#overview")
    assert browser.page.inner_text("#env-shown") == "0"
    assert not browser.errors, browser.errors


def _legend_colours(page, plot_id: str) -> dict[str, str]:
    """``{label: fill}`` of a plot's legend, as the browser computes the fills."""
    return page.eval_on_selector(
        f"#{plot_id} svg.plot-svg",
        """svg => { const legend = svg.querySelector('g[id^="legend"]');
           const fills = [...legend.querySelectorAll('g[id^="patch"] path')]
             .map(p => getComputedStyle(p).fill);
           const labels = [...legend.querySelectorAll('text')].map(t => t.textContent.trim());
           return Object.fromEntries(labels.map((l, i) => [l, fills[i]])); }""")


def _green(rgb: str) -> bool:
    red, green, blue = (int(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].split(","))
    return green > red + 40 and green > blue + 40


def test_verdict_colours_differ_and_unplayed_iterations_read_n_a(finished, browser, tmp_path):
    """ok is the only green of both verdict plots, every category has its own colour in the
    legend; an iteration that played nothing shows n/a (not 0) with a warning above."""
    run_dir = tmp_path / "unplayed"
    shutil.copytree(finished[0], run_dir)
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    rows.append({**rows[-1], "iteration": 2, "envs_valid": 0, "envs_duplicate": 0,
                 "envs_played": 0, "envs_replayed": 0, "mean_regret": 0.0,
                 "agent_success_unhinted": 0.0, "agent_success_hinted": 0.0,
                 "verdicts": {"syntax": 2, "interface": 1, "timeout": 1}})
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    browser.open(build_report(run_dir, tmp_path / "unplayed.html"))
    page = browser.page
    for plot_id in ("plot-verdicts", "plot-family-verdicts"):
        colours = _legend_colours(page, plot_id)
        assert "ok" in colours and len(colours) >= 2, colours
        assert len(set(colours.values())) == len(colours), colours  # one colour per category
        assert [label for label, fill in colours.items() if _green(fill)] == ["ok"], colours
    assert {"syntax", "interface", "timeout"} <= set(_legend_colours(page, "plot-verdicts"))
    cells = page.eval_on_selector_all(
        "#iterations-table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))")
    header = page.eval_on_selector_all("#iterations-table thead th",
                                       "ths => ths.map(t => t.innerText)")
    last = dict(zip(header, cells[-1]))
    assert [last[k] for k in ("mean regret", "success unhinted", "success hinted")] == [
        "n/a"] * 3
    assert last["played"] == "0" and last["designer reward"] != "n/a"
    first = dict(zip(header, cells[0]))
    assert "n/a" not in (first["mean regret"], first["success unhinted"])
    warning = page.inner_text("#nothing-played")
    assert "Iteration(s) 2 played no environment" in warning and "n/a" in warning
    assert page.locator("#env-list pre.doc-text").count() >= 1
    page.screenshot(path=str(tmp_path / "unplayed.png"), full_page=True)
    assert not browser.errors, browser.errors


@pytest.fixture(scope="module")
def experiment_page(known_experiment, tmp_path_factory):
    """The page of the fake experiment (``conftest.known_experiment``), with the first run's own
    report written so that its link leads somewhere."""
    from plugins.report.experiment_page import build_experiment_page

    first = known_experiment / "runs" / "ref" / "seed-0"
    build_report(first, first / "report.html", neighbours=0)
    return build_experiment_page(known_experiment,
                                 tmp_path_factory.mktemp("experiment") / "report.html",
                                 run_reports=False)


#: Where the lead looks at the experiment page (kept after the test's temporary folders go).
EXPERIMENT_SHOT = Path("/tmp/experiment_page.png")


def test_experiment_page_shows_curves_beside_the_table(experiment_page, browser, tmp_path):
    page = browser.open(experiment_page).page
    plots = page.eval_on_selector_all(
        "figure[id^='curve-'] svg.plot-svg", "els => els.map(e => { const r ="
        " e.getBoundingClientRect(); return {w: r.width, h: r.height, top: r.top, left: r.left,"
        " paths: e.querySelectorAll('path').length, texts: e.querySelectorAll('text').length};"
        " })")
    assert len(plots) == 3  # overall, answer yes, answer no
    for plot in plots:
        assert plot["w"] > 300 and plot["h"] > 150 and plot["paths"] > 10 and plot["texts"] > 8
    rows = page.eval_on_selector_all(
        "#table-1 tbody tr", "rows => rows.map(r => { const b = r.getBoundingClientRect();"
        " return {h: b.height, left: b.left, top: b.top,"
        " cells: [...r.cells].map(c => c.innerText)}; })")
    assert len(rows) == 6 and all(r["h"] > 10 for r in rows)
    assert rows[1]["cells"][1:4] == ["good", "58.3 [22.5, 94.2]", "+33.3 [-2.5, +69.2]"]
    # Side by side: the overall curve left of the table, at the same height.
    overall = plots[0]
    assert rows[0]["left"] > overall["left"] + overall["w"]
    assert abs(rows[0]["top"] - overall["top"]) < overall["h"]
    assert page.locator("#checks-table .badge.pass").count() == 16
    assert page.locator("#runs-table tbody tr").count() == 6
    page.screenshot(path=str(tmp_path / "experiment.png"), full_page=True)
    _not_blank(tmp_path / "experiment.png")
    # Renamed into place, whole: another run of the suite on this machine (another checkout)
    # may write it at the same time (in one run, one worker runs this test).
    partial = EXPERIMENT_SHOT.with_name(f".{EXPERIMENT_SHOT.name}.{os.getpid()}")
    shutil.copyfile(tmp_path / "experiment.png", partial)
    os.replace(partial, EXPERIMENT_SHOT)
    # The first run's link opens its own report.
    page.click("#runs-table a.run-report")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    assert page.inner_text("#run-status").startswith("completed")
    assert not browser.errors, browser.errors

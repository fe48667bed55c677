"""The environment cards of the report: skill, level and repairs, and the latest play history
with the grounding document and the designer's prompt."""

from __future__ import annotations

import json
import re

from fakes.report_runs import FAKE_FAMILY_SKILLS
from fakes.report_runs import env_details as _envs


def test_cards_show_skill_level_and_repairs(finished_run, curriculum_html):
    for env_id, details in _envs(finished_run).items():
        card = curriculum_html.split(f'id="env-{env_id}"')[1].split("<h3>Verdict</h3>")[0]
        skill = FAKE_FAMILY_SKILLS[details["family"]]
        assert f'data-skill="{skill}"' in card
        assert f"<dt>skill</dt><dd>{skill}</dd>" in card
        assert f"<dt>level</dt><dd>{details['iteration'] + 1}</dd>" in card
        assert f"<dt>repair turns</dt><dd>{details['repairs']}</dd>" in card
        assert "<dt>repairs</dt>" not in card  # not listed again among the unknown fields
    options = curriculum_html.split('id="filter-skill"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)">', options) == ["", "arithmetic", "logic"]


def test_cards_show_the_latest_play_history_document_and_prompt(finished_run, finished_html):
    replays = [json.loads(line) for line in
               (finished_run / "replays.jsonl").read_text().splitlines()]
    assert replays, "the fake run replays a frontier environment"
    replayed = replays[-1]
    details = _envs(finished_run)[replayed["id"]]
    card = finished_html[finished_html.index(f'id="env-{replayed["id"]}"'):]
    card = card[:card.index("</details>\n<details") if "</details>\n<details" in card
                else len(card)]
    summary = card[:card.index("</summary>")]
    regret = replayed["difficulty"]["figures"]["regret"]
    assert (f"played last in iteration {replayed['iteration']} (proposed in "
            f"{details['iteration']}, replayed") in summary
    assert f"regret {regret:.3f}" in summary
    history = card[card.index('class="grid history"'):]
    history = history[:history.index("</table>")]
    assert history.count("<tr>") == 1 + 1 + sum(r["id"] == replayed["id"] for r in replays)
    assert ">proposal<" in history and ">replay<" in history
    # the grounding document and the designer's prompt, stored at proposal time
    assert details["doc_text"] and details["doc_chars"] == len(details["doc_text"])
    assert details["designer_prompt"] and details["designer_prompt"][-1]["content"]
    assert 'class="text doc-text">' + details["doc_text"] in card
    assert "Designer prompt (" in card

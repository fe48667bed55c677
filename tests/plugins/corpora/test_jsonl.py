"""The ``jsonl`` corpus sampler: formats, ids, truncation, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugins.corpora.jsonl import JsonlSampler
from plugins.corpora.options import JsonlOptions
from plugins.corpora.paths import BUNDLED_CORPUS
from spade_core.errors import ConfigError


def write_jsonl(path: Path, entries: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in entries), encoding="utf-8")
    return path


def all_docs(sampler: JsonlSampler) -> dict[str, str]:
    return {sampler.ids[i]: sampler.document(i).text for i in range(len(sampler))}


def test_reads_text_and_orig_doc_with_ids_from_field_or_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [
        {"id": "first", "text": "alpha beta", "topic": "math"},
        {"orig_doc": "gamma delta"},
        {"id": 7, "text": "epsilon"},
    ])
    sampler = JsonlSampler(JsonlOptions(path=str(path)), seed=0)
    assert all_docs(sampler) == {"first": "alpha beta", "c.jsonl:2": "gamma delta",
                                 "7": "epsilon"}
    doc = sampler.document(0)
    assert doc.source == str(path)
    assert doc.meta["topic"] == "math" and doc.meta["line"] == 1
    assert doc.meta["words"] == 2 and doc.meta["truncated"] is False


def test_configured_fields(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"key": "k1", "body": "one two", "text": "ignored"}])
    sampler = JsonlSampler(JsonlOptions(path=str(path), text_field="body", id_field="key"),
                           seed=0)
    assert all_docs(sampler) == {"k1": "one two"}


def test_blank_lines_and_blank_texts_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "kept"}\n\n   \n{"text": "  "}\n{"text": "also kept"}\n')
    sampler = JsonlSampler(JsonlOptions(path=str(path)), seed=0)
    assert sorted(all_docs(sampler).values()) == ["also kept", "kept"]
    assert sampler.skipped_blank == 1
    assert sampler.ids == ["c.jsonl:1", "c.jsonl:5"]


def test_truncation_keeps_formatting_before_the_cut(tmp_path: Path) -> None:
    text = "# Title\n\nFirst   line here.\nSecond line\tgoes on and on."
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": text}])
    doc = JsonlSampler(JsonlOptions(path=str(path), max_words=5), seed=0).document(0)
    assert doc.text == "# Title\n\nFirst   line here."
    assert doc.meta["words"] == 11 and doc.meta["truncated"] is True
    whole = JsonlSampler(JsonlOptions(path=str(path), max_words=None), seed=0).document(0)
    assert whole.text == text and whole.meta["truncated"] is False


def test_relative_path_resolves_against_cwd(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "c.jsonl", [{"text": "x y"}])
    monkeypatch.chdir(tmp_path)
    sampler = JsonlSampler(JsonlOptions(path="sub/c.jsonl"), seed=0)
    assert sampler.path == tmp_path / "sub" / "c.jsonl"


def test_default_path_is_the_bundled_corpus() -> None:
    for options in (JsonlOptions(), JsonlOptions(path="bundled:grounding")):
        sampler = JsonlSampler(options, seed=0)
        assert sampler.path == BUNDLED_CORPUS and len(sampler) >= 200


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.jsonl: no such file"):
        JsonlSampler(JsonlOptions(path=str(tmp_path / "nope.jsonl")), seed=0)


def test_folder_given_to_jsonl(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a file.*'folder' sampler"):
        JsonlSampler(JsonlOptions(path=str(tmp_path)), seed=0)


def test_unknown_bundled_name() -> None:
    with pytest.raises(ConfigError, match="unknown bundled corpus 'bundled:wiki'"):
        JsonlSampler(JsonlOptions(path="bundled:wiki"), seed=0)


def test_line_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"text": "fine"}\n\n{"text": "oops",\n')
    with pytest.raises(ConfigError) as info:
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)
    assert f"{path}:3: not valid JSON" in str(info.value)


def test_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "a"}, ["text", "b"]])
    with pytest.raises(ConfigError, match=r"c\.jsonl:2: expected a JSON object, got list"):
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)


def test_entry_without_text_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "a"}, {"body": "b", "title": "t"}])
    with pytest.raises(ConfigError) as info:
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)
    message = str(info.value)
    assert f"{path}:2: line has no 'text' or 'orig_doc' field" in message
    assert "fields: body, title" in message and "text_field" in message


def test_entry_without_configured_text_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "a"}])
    with pytest.raises(ConfigError, match=r"c\.jsonl:1: line has no 'content' field"):
        JsonlSampler(JsonlOptions(path=str(path), text_field="content"), seed=0)


def test_text_that_is_not_a_string(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": ["a", "b"]}])
    with pytest.raises(ConfigError, match=r"c\.jsonl:1: field 'text' must be a string, got list"):
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match=r"c\.jsonl:2: not UTF-8"):
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)


@pytest.mark.parametrize("content", ["", "\n\n", '{"text": ""}\n{"text": " "}\n'])
def test_empty_corpus(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    with pytest.raises(ConfigError, match="the corpus is empty"):
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)


def test_file_changed_after_scan_is_reported(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "a b"}, {"text": "c d"}])
    sampler = JsonlSampler(JsonlOptions(path=str(path)), seed=0)
    path.write_text("garbage\n" * 4)
    with pytest.raises(ConfigError, match="changed after the sampler read it"):
        sampler.document(1)


FIXTURE = [
    {"id": "a", "orig_doc": "original words here", "text": "cleaned text"},
    {"id": "b", "orig_doc": "", "text": "fallback text"},
    {"id": "c", "text": "only text"},
    {"id": "d", "orig_doc": "   ", "text": ""},
]


def _fixture(tmp_path: Path) -> Path:
    path = write_jsonl(tmp_path / "docs.jsonl", FIXTURE)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n\n[1, 2]\n" + json.dumps({"id": "e", "body": "x"}) + "\n"
                     + json.dumps({"id": "f", "text": 5}) + "\n"
                     + json.dumps({"id": "g", "text": "one two three four five six"}) + "\n")
    return path


def test_a_precedence_list_takes_the_first_non_blank_field(tmp_path: Path) -> None:
    path = _fixture(tmp_path)
    sampler = JsonlSampler(JsonlOptions(path=str(path), text_field=["orig_doc", "text"],
                                        on_bad_line="skip", max_words=None), seed=0)
    assert all_docs(sampler) == {"a": "original words here", "b": "fallback text",
                                 "c": "only text", "g": "one two three four five six"}
    # today's default: 'text' when present, whatever orig_doc holds
    default = JsonlSampler(JsonlOptions(path=str(path), on_bad_line="skip", max_words=None), 0)
    assert all_docs(default)["a"] == "cleaned text"


def test_bad_lines_are_errors_by_default_and_counted_when_skipped(tmp_path: Path) -> None:
    path = _fixture(tmp_path)
    with pytest.raises(ConfigError, match=r"docs.jsonl:5: not valid JSON"):
        JsonlSampler(JsonlOptions(path=str(path)), seed=0)
    sampler = JsonlSampler(JsonlOptions(path=str(path), on_bad_line="skip"), seed=0)
    # not JSON, a list, no text field, a non-string text: four bad lines; the blank line and the
    # blank texts are left out without counting, as before
    assert sampler.skipped_lines == 4 and len(sampler) == 4
    assert sampler.state_dict()["skipped_lines"] == 4
    fresh = JsonlSampler(JsonlOptions(path=str(path), on_bad_line="skip"), seed=0)
    fresh.load_state_dict(sampler.state_dict())  # the count is not a resume condition


def test_truncation_keeps_the_head_and_can_add_the_reference_note(tmp_path: Path) -> None:
    path = _fixture(tmp_path)
    options = {"path": str(path), "on_bad_line": "skip", "max_words": 3}
    noted = JsonlSampler(JsonlOptions(**options, truncation_note=True), seed=0)
    assert all_docs(noted)["g"] == "one two three\n[Document truncated at ~3 words]"
    assert all_docs(noted)["c"] == "only text"
    plain = JsonlSampler(JsonlOptions(**options), seed=0)
    assert all_docs(plain)["g"] == "one two three"

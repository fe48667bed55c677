"""The ``folder`` corpus sampler: recursive, sorted, filtered, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.corpora.folder import FolderSampler
from plugins.corpora.options import FolderOptions
from spade_core.errors import ConfigError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "b" / "deep").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "z.txt").write_text("zeta file")
    (root / "a.md").write_text("# A\n\nalpha file")
    (root / "b" / "c.TXT").write_text("upper-case extension")
    (root / "b" / "deep" / "d.md").write_text("deep file\n")
    (root / "b" / "skip.py").write_text("print('not a document')")
    (root / "b" / "blank.txt").write_text("  \n\n")
    (root / ".hidden" / "h.txt").write_text("hidden file")
    (root / ".dot.md").write_text("hidden dot file")
    return root


def test_finds_files_recursively_sorted_by_relative_path(tree: Path) -> None:
    sampler = FolderSampler(FolderOptions(path=str(tree)), seed=0)
    assert sampler.ids == ["a.md", "b/c.TXT", "b/deep/d.md", "z.txt"]
    assert sampler.skipped_blank == 1
    doc = sampler.document(0)
    assert doc.text == "# A\n\nalpha file"
    assert doc.source == str(tree) and doc.meta["path"] == str(tree / "a.md")


def test_extensions_and_hidden_files(tree: Path) -> None:
    only_md = FolderSampler(FolderOptions(path=str(tree), extensions=["md"]), seed=0)
    assert only_md.ids == ["a.md", "b/deep/d.md"]
    with_hidden = FolderSampler(FolderOptions(path=str(tree), include_hidden=True), seed=0)
    assert ".hidden/h.txt" in with_hidden.ids and ".dot.md" in with_hidden.ids


def test_truncation(tree: Path) -> None:
    sampler = FolderSampler(FolderOptions(path=str(tree), max_words=2), seed=0)
    doc = sampler.document(0)
    assert doc.text == "# A" and doc.meta["truncated"] is True and doc.meta["words"] == 4


def test_relative_path(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree.parent)
    assert FolderSampler(FolderOptions(path="docs"), seed=0).root == tree


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing: no such folder"):
        FolderSampler(FolderOptions(path=str(tmp_path / "missing")), seed=0)


def test_file_instead_of_folder(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text("{}")
    with pytest.raises(ConfigError, match="not a folder.*'jsonl'"):
        FolderSampler(FolderOptions(path=str(tmp_path / "c.jsonl")), seed=0)


def test_path_is_required() -> None:
    with pytest.raises(ConfigError, match="needs a path"):
        FolderSampler(FolderOptions(), seed=0)


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.rst").write_text("not a matching extension")
    (tmp_path / "blank.md").write_text("")
    with pytest.raises(ConfigError, match=r"the corpus is empty: no non-blank files ending in "
                                          r"\.txt, \.md"):
        FolderSampler(FolderOptions(path=str(tmp_path)), seed=0)


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 au lait")
    with pytest.raises(ConfigError, match=r"bad\.txt: not UTF-8"):
        FolderSampler(FolderOptions(path=str(tmp_path)), seed=0)

"""What every built-in sampler shares (``IndexedSampler``): the draw order, seeded, uniform or
shuffled, and resumable, for each sampler kind; and the truncation of documents to a word
count."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from plugins.corpora.sampler_base import truncate_words
from plugins.corpora.folder import FolderSampler
from plugins.corpora.jsonl import JsonlSampler
from plugins.corpora.options import FolderOptions, JsonlOptions
from plugins.corpora.plugin import build_folder
from spade_core.components import BuildContext
from spade_core.errors import ConfigError

from fakes.corpora import N_DOCS, ids


def make(corpus: Path, seed: int = 5, sampling: str = "uniform") -> JsonlSampler:
    return JsonlSampler(JsonlOptions(path=str(corpus), sampling=sampling), seed=seed)


@pytest.mark.parametrize("sampling", ["uniform", "shuffle"])
def test_same_seed_same_sequence_other_seed_differs(corpus: Path, sampling: str) -> None:
    a = ids(make(corpus, 5, sampling).sample(40))
    b = ids(make(corpus, 5, sampling).sample(40))
    c = ids(make(corpus, 6, sampling).sample(40))
    assert a == b
    assert a != c


@pytest.mark.parametrize("sampling", ["uniform", "shuffle"])
def test_batch_size_does_not_change_the_sequence(corpus: Path, sampling: str) -> None:
    whole = ids(make(corpus, sampling=sampling).sample(30))
    pieces = make(corpus, sampling=sampling)
    split = ids(pieces.sample(1)) + ids(pieces.sample(0)) + ids(pieces.sample(13)) \
        + ids(pieces.sample(16))
    assert split == whole


def test_uniform_draws_with_replacement_and_covers_the_corpus(corpus: Path) -> None:
    drawn = ids(make(corpus).sample(600))
    counts = Counter(drawn)
    assert set(counts) == {f"d{i}" for i in range(N_DOCS)}
    # 50 expected per document; a fair uniform draw stays well inside these bounds.
    assert all(20 <= c <= 85 for c in counts.values()), counts
    assert len(set(drawn[:N_DOCS])) < N_DOCS  # repeats happen within the first "epoch"


def test_shuffle_gives_each_document_once_per_epoch_in_fresh_orders(corpus: Path) -> None:
    drawn = ids(make(corpus, sampling="shuffle").sample(3 * N_DOCS))
    epochs = [drawn[i * N_DOCS:(i + 1) * N_DOCS] for i in range(3)]
    for epoch in epochs:
        assert sorted(epoch) == sorted(f"d{i}" for i in range(N_DOCS))
    assert epochs[0] != epochs[1] or epochs[1] != epochs[2]


@pytest.mark.parametrize("sampling", ["uniform", "shuffle"])
@pytest.mark.parametrize("first", [0, 5, N_DOCS, N_DOCS + 7])
def test_resume_continues_the_identical_sequence(corpus: Path, sampling: str,
                                                 first: int) -> None:
    reference = make(corpus, sampling=sampling)
    expected = ids(reference.sample(first + 25))[first:]

    original = make(corpus, sampling=sampling)
    original.sample(first)
    state = json.loads(json.dumps(original.state_dict()))  # checkpoints are JSON
    resumed = make(corpus, sampling=sampling)
    resumed.load_state_dict(state)
    assert ids(resumed.sample(25)) == expected
    assert ids(original.sample(25)) == expected


def test_resume_refuses_another_seed_mode_or_corpus(corpus: Path, tmp_path: Path) -> None:
    state = make(corpus, seed=5).state_dict()
    with pytest.raises(ConfigError, match="seed is 5 in the checkpoint but 6 now"):
        make(corpus, seed=6).load_state_dict(state)
    with pytest.raises(ConfigError, match="sampling"):
        make(corpus, sampling="shuffle").load_state_dict(state)
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({"id": f"e{i}", "text": "x"}) + "\n"
                             for i in range(N_DOCS)))
    with pytest.raises(ConfigError, match="the corpus changed since the checkpoint"):
        make(other).load_state_dict(state)
    with pytest.raises(ConfigError, match="integer 'drawn'"):
        make(corpus).load_state_dict({"drawn": "3"})


def test_resume_refuses_a_state_of_another_sampler_kind(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("some text")
    state = FolderSampler(FolderOptions(path=str(folder)), seed=5).state_dict()
    with pytest.raises(ConfigError, match="sampler is 'folder' in the checkpoint"):
        make(corpus).load_state_dict(state)


def test_folder_sampler_is_seeded_and_resumable(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"f{i}.md").write_text(f"file {i}")
    opts = FolderOptions(path=str(tmp_path), sampling="shuffle")
    first = build_folder(opts, BuildContext(seed=3))
    expected = ids(first.sample(20))
    again = build_folder(opts, BuildContext(seed=3))
    again.sample(8)
    resumed = build_folder(opts, BuildContext(seed=3))
    resumed.load_state_dict(again.state_dict())
    assert ids(resumed.sample(12)) == expected[8:]


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("a b c", 3, "a b c"),
    ("a b c", 2, "a b"),
    ("  lead  and trail  ", 1, "  lead"),
    ("", 4, ""),
    ("one\ntwo\n", 10, "one\ntwo\n"),
])
def test_truncate_words(text: str, limit: int, expected: str) -> None:
    assert truncate_words(text, limit)[0] == expected

"""The ``none`` corpus (the no-corpus ablation): empty documents, resumable, and a run with it
completes through the real loop, sandbox and memory with no document block in the designer's
prompt (the skill's aim and ideas stand in for it)."""

from __future__ import annotations

import pytest

import plugins.corpora.plugin as corpora_plugin
import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from plugins.corpora.none import NoCorpus
from plugins.designer.prompt_parts import NO_DOCUMENT
from spade_core.errors import ConfigError

from fakes.selfplay import FakeSelfPlayPlugin, FakeSkilledFamily, run_real_sandbox_and_memory


def test_the_none_corpus_gives_empty_documents_and_resumes():
    corpus = NoCorpus()
    docs = corpus.sample(3)
    assert [d.text for d in docs] == ["", "", ""]
    assert len({d.id for d in docs}) == 3
    again = NoCorpus()
    again.load_state_dict(corpus.state_dict())
    assert again.sample(1)[0].id == corpus.sample(1)[0].id
    with pytest.raises(ConfigError, match="corpus none"):
        again.load_state_dict({"sampler": "jsonl", "drawn": 1})


def test_a_run_with_corpus_none_completes(tmp_path):
    plugin = FakeSelfPlayPlugin(family=FakeSkilledFamily)
    run_dir, rows = run_real_sandbox_and_memory(
        tmp_path, (plugin, corpora_plugin, designer_plugin, estimators_plugin, trainers_plugin),
        2, {"envs_per_iteration": 2, "rollouts_per_env": 2, "max_turns": 1, "max_attempts": 1,
            "schedule": "window", "regeneration_interval": 1},
        corpus="none")
    assert len(rows) == 2 and all(r["envs_valid"] == 2 for r in rows)
    prompts = [p[-1]["content"] for p in plugin.backends[-1].designer_prompts]
    assert prompts and all(NO_DOCUMENT in p and "Document:" not in p for p in prompts)
    assert all("Write a question about alpha" in p or "Write a question about beta" in p
               for p in prompts)

"""Built-in corpus samplers (``jsonl``, ``folder``, ``hf-dataset``) and the bundled grounding
corpus (``data/grounding.jsonl``). The hook implementation lives in :mod:`plugins.corpora.plugin`;
it is re-exported here so the entry point may name either module."""

from plugins.corpora.plugin import register_corpus_samplers

__all__ = ["register_corpus_samplers"]

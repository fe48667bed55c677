"""Held-out evaluation: playing eval suites and scoring them (pass@k per bucket), the logic of
``spade eval`` and :func:`spade_core.evaluate`, checkpoint loading, the score table, and the
self-play loop's in-run evaluator (``eval.every``). The suites themselves are components (kind
``eval_suite``) that plugins register. See ``docs/eval.md``."""

"""Held-out evaluation: the built-in eval suites (``reasoning-gym``, ``bfcl``, ``pool``) and the
``spade eval`` command. See ``docs/eval.md``."""

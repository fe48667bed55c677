"""The built-in sandbox: untrusted environment programs run isolated, fast, with clear verdicts.

Layers: a RestrictedPython compile policy (``policy.py``, ``guards.py``, ``modules.py``) as defence
in depth, and OS isolation as the real boundary (``isolation.py``, ``server.py``, ``worker.py``).
The host side is ``executors.py`` (where workers come from), ``process_session.py`` and
``replies.py`` (sessions of instances in workers, and their replies checked), ``batch.py`` (one
frame per worker) and ``process_sandbox.py`` (the ``Sandbox``). Validity (SPADE's rules) is the
core's, in ``spade_core.validation``: this package provides isolation only. ``plugin.py``
registers it as the sandboxes named ``process`` and ``ray`` (their options in ``options.py``).
Importing this package is light; nothing here starts a process until a sandbox is built.
"""

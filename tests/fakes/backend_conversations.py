"""Two short conversations the backend tests generate from (one with a system message)."""

from __future__ import annotations

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You write Python."},
     {"role": "user", "content": "Write a function that adds two numbers."}],
]

"""spade_core/config/yaml_safe.py: configs are read as safe YAML: no Python tags, bounded aliases
and nesting, text only, errors with their line."""

from __future__ import annotations

import time

import pytest

from spade_core.config.yaml_safe import MAX_EXPANDED_NODES, load_yaml_text
from spade_core.errors import ConfigError


def test_python_tags_refused_and_not_executed(tmp_path):
    canary = tmp_path / "canary"
    text = f'!!python/object/apply:os.system ["touch {canary}"]\n'
    with pytest.raises(ConfigError, match=r"tag !!python/object/apply:os.system is not allowed"):
        load_yaml_text(text, "c.yaml")
    assert not canary.exists()


def test_alias_bomb_fails_fast():
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    start = time.monotonic()
    with pytest.raises(ConfigError, match="alias bomb"):
        load_yaml_text("\n".join(lines), "bomb.yaml")
    assert time.monotonic() - start < 10  # a hang guard, not a speed claim


def test_moderate_aliases_allowed():
    text = "base: &b {x: 1, y: 2}\none: *b\ntwo: *b\n"
    assert load_yaml_text(text, "c.yaml")["two"] == {"x": 1, "y": 2}
    assert MAX_EXPANDED_NODES >= 10_000


def test_recursive_alias_refused():
    with pytest.raises(ConfigError, match="refers to itself"):
        load_yaml_text("a: &a [1, *a]\n", "c.yaml")


def test_binary_and_non_utf8_refused():
    with pytest.raises(ConfigError, match="binary file"):
        load_yaml_text(b"\x7fELF\x00\x01\x02", "c.yaml")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_yaml_text(b"run: \xff\xfe", "c.yaml")


def test_garbage_reports_line_and_column():
    with pytest.raises(ConfigError, match=r"c\.yaml line \d+, column \d+: not valid YAML"):
        load_yaml_text("run:\n  name: [unclosed\n", "c.yaml")


def test_deep_nesting_refused():
    with pytest.raises(ConfigError, match="nest"):
        load_yaml_text("[" * 5000 + "]" * 5000, "c.yaml")

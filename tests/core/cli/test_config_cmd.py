"""spade_core/cli/config_cmd.py: ``spade config check`` on bad config files: exit 2 with one clear
paragraph that says where, nothing executed."""

from __future__ import annotations

import time

import pytest

from fakes.cli import run_spade


BAD_CONFIGS = {
    "empty": (b"", "the config is empty"),
    "comment-only": (b"# nothing here\n", "the config is empty"),
    "garbage": (b"run: [unclosed\n  : : :\n", "not valid YAML"),
    "binary": (bytes(range(256)) * 4, "binary file"),
    "non-mapping": (b"- just\n- a list\n", "top level must be a mapping"),
    "scalar": (b"42\n", "top level must be a mapping"),
    "unknown-key": (b"run: {name: x}\nbogus_section: 1\n", "bogus_section: unknown key"),
    "python-object": (b"!!python/object/apply:os.system ['touch CANARY']\n", "is not allowed"),
    "python-name": (b"run: !!python/name:os.system\n", "is not allowed"),
    "alias-bomb": (
        b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
        b"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
        b"h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
        "alias bomb",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_config_exits_2_with_clear_message(tmp_path, name):
    raw, expected = BAD_CONFIGS[name]
    raw = raw.replace(b"CANARY", str(tmp_path / "canary").encode())
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(raw)
    start = time.monotonic()
    result = run_spade("config", "check", str(path), cwd=tmp_path)
    assert time.monotonic() - start < 30  # "within seconds": a hang guard
    assert result.returncode == 2, result
    assert expected in result.stderr, result.stderr
    assert str(path) in result.stderr  # says where
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.count("\n") == 1  # one paragraph
    assert not (tmp_path / "canary").exists()


def test_missing_file_and_directory(tmp_path):
    result = run_spade("config", "check", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "no such config file" in result.stderr
    result = run_spade("config", "check", str(tmp_path))
    assert result.returncode == 2 and "not a regular file" in result.stderr

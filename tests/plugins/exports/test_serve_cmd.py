"""``spade envs serve ENV --mcp``: ``--mcp`` is required, the options reach the server, and the
server and its sandbox are closed when serving ends, also on an error. (Serving itself:
test_mcp_server.py.)"""

from __future__ import annotations

import pytest

from spade_core.cli import main

import plugins.exports.mcp_server as mcp_server
import plugins.exports.runtime as runtime


class FakeServer:
    def __init__(self, env, seed, sandbox):
        self.env, self.seed, self.sandbox, self.closed = env, seed, sandbox, False
        FakeServer.last = self

    def close(self):
        self.closed = True


class FakeShared:
    closed: list[str] = []

    def __init__(self, name):
        self.name = name

    def close(self):
        FakeShared.closed.append(self.name)


@pytest.fixture
def served(monkeypatch):
    calls = {}
    monkeypatch.setattr(mcp_server, "EnvServer", FakeServer)
    monkeypatch.setattr(mcp_server, "resolve_env",
                        lambda env, run_dir=None, family=None: (env, run_dir, family))
    monkeypatch.setattr(runtime, "shared_sandbox", FakeShared)
    FakeShared.closed = []

    def serve(server, http, port):
        calls.update(server=server, http=http, port=port)
        if server.env[0] == "broken":
            raise RuntimeError("transport failed")

    monkeypatch.setattr(mcp_server, "serve", serve)
    return calls


def test_the_options_reach_the_server_and_everything_is_closed(served, capsys):
    assert main(["envs", "serve", "seed:x", "--mcp", "--run-dir", "r", "--family", "tool-use",
                 "--seed", "4", "--sandbox", "other", "--http", "--port", "9000"]) == 0
    server = served["server"]
    assert server.env == ("seed:x", "r", "tool-use") and server.seed == 4
    assert server.sandbox == "other" and served["http"] and served["port"] == 9000
    assert server.closed and FakeShared.closed == ["other"]
    assert main(["envs", "serve", "broken", "--mcp"]) != 0
    assert "transport failed" in capsys.readouterr().err
    assert served["server"].closed and served["port"] == 8765 and not served["http"]
    assert FakeShared.closed == ["other", "process"]


def test_mcp_is_required(served, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["envs", "serve", "seed:x"])
    assert exited.value.code == 2
    assert "--mcp" in capsys.readouterr().err and not served

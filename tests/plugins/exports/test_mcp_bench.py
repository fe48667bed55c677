"""``spade bench mcp``: its program is valid in the sandbox and reaches its goal through the
server's tools, and the direct side of the benchmark times real steps."""

from __future__ import annotations


def test_bench_program_plays_through_the_server_and_directly(tmp_path):
    """``spade bench mcp``'s program: valid in the sandbox, its goal reached through the server's
    tools; the direct side of the benchmark times real steps."""
    from plugins.exports.mcp_bench import BENCH_PROGRAM, direct
    from plugins.exports.mcp_server import EnvServer, resolve_env

    program = tmp_path / "bench.py"
    program.write_text(BENCH_PROGRAM)
    server = EnvServer(resolve_env(str(program)))
    try:
        for _ in range(3):
            assert server.call("s", "add", {"name": "a", "amount": 1})[0] == "ok"
        assert server.call("s", "read", {"name": "a"})[0] == "3"
        assert server.call("s", "submit_answer", {"answer": "done"})[1]["reward"] == 1.0
    finally:
        server.close()
    figures = direct(6)
    assert figures["mean_ms"] > 0 and figures["calls_per_s"] > 0

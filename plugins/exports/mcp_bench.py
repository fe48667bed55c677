"""``spade bench mcp``: tool-call round trips through ``spade envs serve --mcp`` against direct
play.

Both sides play the same database-backed program (:data:`BENCH_PROGRAM`: one read tool, one
write tool over the episode's SQLite database, a turn limit high enough for the whole run) in
the ``process`` sandbox. Direct: ``SandboxedEpisode.step`` with a ``<tool_call>`` action, as the
exports and the self-play loop play. MCP: the ``mcp`` package's stdio client calling the same
tool of a ``spade envs serve`` subprocess, which makes that same step. The difference is the
protocol's cost per call (JSON-RPC over pipes, the server's thread hop); the server's start-up
(loading the plugins, the sandbox) is reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: A database-backed tool-use program whose turn limit does not end the benchmark's episode.
BENCH_PROGRAM = '''
SCHEMA = "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);"


class CounterBenchEnv(ToolUseBaseEnv):
    def __init__(self, max_turns=1000000, **kwargs):
        super().__init__(max_turns=max_turns, **kwargs)

    def reset(self, seed=None):
        self.create_database(SCHEMA, {"counters": [("a", 0), ("b", 0)]})
        self._tools = {
            "read": {"description": "A counter's value.", "parameters": {"type": "object",
                     "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            "add": {"description": "Add to a counter.", "parameters": {"type": "object",
                    "properties": {"name": {"type": "string"}, "amount": {"type": "integer"}},
                    "required": ["name", "amount"]}},
        }
        self._expected_answer = None
        return "Add 3 to counter a, then <answer>done</answer>.", {}

    def tool_read(self, name):
        return str(self._db.scalar("SELECT value FROM counters WHERE name = ?", (name,)))

    def tool_add(self, name, amount):
        self._db.execute("UPDATE counters SET value = value + ? WHERE name = ?", (amount, name))
        return "ok"

    def goal_reached(self):
        return self._db.scalar("SELECT value FROM counters WHERE name = 'a'") == 3

    def solution(self):
        return "1. add(name='a', amount=3) 2. <answer>done</answer>"
'''


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calls", type=int, default=500,
                        help="tool calls timed on each side (default 500)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def _calls(n: int) -> list[tuple[str, dict[str, Any]]]:
    return [("read", {"name": "a"}) if k % 2 else ("add", {"name": "b", "amount": 1})
            for k in range(n)]


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {"mean_ms": round(statistics.fmean(ms), 3), "median_ms": round(ms[len(ms) // 2], 3),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3),
            "calls_per_s": round(len(ms) / (sum(ms) / 1000), 1)}


def direct(n: int) -> dict[str, float]:
    """``n`` tool calls as ``SandboxedEpisode.step`` actions."""
    from plugins.exports.runtime import SandboxedEpisode, shared_sandbox
    from plugins.families.solutions import tool_call_action

    play = SandboxedEpisode({"id": "bench", "family": "tool-use", "source": BENCH_PROGRAM})
    try:
        play.reset(0)
        times = []
        for name, arguments in _calls(n):
            start = time.perf_counter()
            play.step(tool_call_action(name, arguments))
            times.append(time.perf_counter() - start)
    finally:
        play.close()
        shared_sandbox().close()
    return _summary(times)


def through_mcp(n: int) -> dict[str, Any]:
    """``n`` tool calls from the ``mcp`` stdio client to a ``spade envs serve`` subprocess."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    root = Path(__file__).resolve().parents[2]
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="spade-mcp-bench-") as folder:
        program = Path(folder) / "counter_bench.py"
        program.write_text(BENCH_PROGRAM, encoding="utf-8")
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "spade_core.cli", "envs", "serve", str(program), "--mcp"],
            cwd=str(root), env={**os.environ, "OMP_NUM_THREADS": "1"})

        async def main() -> None:
            started = time.perf_counter()
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("read", {"name": "a"})  # the episode's reset
                    result["startup_s"] = round(time.perf_counter() - started, 2)
                    times = []
                    for name, arguments in _calls(n):
                        start = time.perf_counter()
                        await session.call_tool(name, arguments)
                        times.append(time.perf_counter() - start)
                    final = await session.call_tool("submit_answer", {"answer": "done"})
                    result.update(_summary(times))
                    result["final_reward"] = (final.structured_content or {}).get("reward")

        anyio.run(main)
    return result


def run(args: argparse.Namespace) -> int:
    if args.calls < 1:
        from spade_core.errors import UsageError

        raise UsageError("bench mcp: --calls must be at least 1")
    plain = direct(args.calls)
    mcp = through_mcp(args.calls)
    figures = {"calls": args.calls, "direct": plain, "mcp": mcp,
               "overhead_ms_per_call": round(mcp["mean_ms"] - plain["mean_ms"], 3),
               "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"tool-call round trips, {args.calls} calls each side (the same program and sandbox)")
    for name, row in (("direct (sandbox step)", plain), ("MCP stdio client", mcp)):
        print(f"  {name:<22} mean {row['mean_ms']:.3f} ms  median {row['median_ms']:.3f} ms  "
              f"p95 {row['p95_ms']:.3f} ms  {row['calls_per_s']:.0f} calls/s")
    print(f"  MCP overhead per call: {figures['overhead_ms_per_call']:.3f} ms; server start-up "
          f"(plugins, sandbox, first reset): {mcp['startup_s']:.2f} s")
    return 0

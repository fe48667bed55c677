"""``spade envs serve ENV --mcp``: the ``mcp`` package's own client starts the server on a bundled
database-backed environment, lists its tools, plays the gold sequence to reward 1 and a wrong one
to 0; the server half (sessions, episode end, errors) directly."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from fakes.in_process import FakeInProcessSession
from plugins.families.tool_use import ToolUseFamily

ROOT = Path(__file__).resolve().parents[3]
FAMILY = ToolUseFamily()
SEED = 3
ENV = "seed:inventory_orders_db"


def _gold_calls() -> list[tuple[str, dict]]:
    """The seed's solution at SEED as (tool, arguments) pairs, then the final answer (our own
    seed program, trusted: run in-process)."""
    source = next(p.source for p in FAMILY.seed_programs()
                  if p.description.startswith("inventory_orders_db"))
    session = FakeInProcessSession(source, FAMILY)
    _, info = session.reset(SEED)
    calls = []
    for action in FAMILY.solution_actions(session.solution(), FAMILY.tools_from_info(info)):
        if action.startswith("<tool_call>"):
            call = json.loads(action[len("<tool_call>"):-len("</tool_call>")])
            calls.append((call["name"], call["arguments"]))
        else:
            calls.append(("submit_answer", {"answer": action[len("<answer>"):-len("</answer>")]}))
    return calls


async def _play(calls: list[tuple[str, dict]]) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "spade_core.cli", "envs", "serve", ENV, "--mcp", "--seed", str(SEED)],
        cwd=str(ROOT), env={**os.environ, "OMP_NUM_THREADS": "1"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            prompt = await session.get_prompt("task")
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
            after = await session.call_tool("list_orders", {"customer_id": 1})
    return {"instructions": init.instructions, "tools": listed.tools, "results": results,
            "prompt": prompt.messages[0].content.text, "after": after}


@pytest.mark.timeout(120)
def test_an_mcp_client_plays_the_gold_sequence_to_1_and_a_wrong_one_to_0():
    import anyio

    gold = _gold_calls()
    assert [name for name, _ in gold] == ["search_products", "find_customer", "place_order",
                                          "submit_answer"]
    place = dict(gold[2][1])
    wrong = gold[:2] + [("place_order", {**place, "quantity": place["quantity"] - 1}),
                        ("submit_answer", {"answer": "done"})]
    outcome: dict[str, dict] = {}

    async def both() -> None:
        async def one(name: str, calls: list) -> None:
            outcome[name] = await _play(calls)

        async with anyio.create_task_group() as group:  # two servers, two episodes
            group.start_soon(one, "gold", gold)
            group.start_soon(one, "wrong", wrong)

    anyio.run(both)
    played = outcome["gold"]
    tools = {t.name: t for t in played["tools"]}
    assert set(tools) == {"search_products", "find_customer", "place_order", "list_orders",
                          "submit_answer"}
    assert tools["place_order"].input_schema["required"] == ["customer_id", "sku", "quantity"]
    assert tools["place_order"].input_schema["properties"]["quantity"] == {
        "type": "integer", "minimum": 1}
    assert "Please order" in played["instructions"] and "Please order" in played["prompt"]
    assert "placed" in played["results"][2].content[0].text
    final = played["results"][-1]
    assert final.structured_content["reward"] == 1.0 and final.structured_content["solved"]
    assert played["after"].is_error  # one episode per session: it is over
    wrong_final = outcome["wrong"]["results"][-1]
    assert wrong_final.structured_content == {"reward": 0.0, "solved": False,
                                              "observation": "Incorrect. Keep using tools."}


@pytest.fixture(scope="module")
def served():
    from plugins.exports.mcp_server import EnvServer, resolve_env

    server = EnvServer(resolve_env(ENV), seed=SEED)
    yield server
    server.close()


def test_each_session_gets_its_own_episode_reset_with_the_seed(served):
    gold = _gold_calls()
    for name, arguments in gold[:3]:
        text, _, error = served.call("a", name, arguments)
        assert not error, text
    # Session "b" starts from the seeded state: no order yet, and a wrong tool is an error.
    text, _, error = served.call("b", "list_orders", {"customer_id": gold[2][1]["customer_id"]})
    assert text == "No orders." and not error
    assert served.call("b", "no_such_tool", {})[2]
    _, result, _ = served.call("a", "submit_answer", {"answer": "done"})
    assert result["reward"] == 1.0
    assert served.call("a", "list_orders", {"customer_id": 1})[2]
    served.end("a")
    text, _, error = served.call("a", "list_orders", {"customer_id": 1})
    assert text == "No orders." and not error  # a new session under the same key: reset


def test_mcp_tool_list_has_schemas_and_submit_answer(served):
    tools = {t["name"]: t for t in served.mcp_tools()}
    assert tools["submit_answer"]["inputSchema"]["required"] == ["answer"]
    assert all(t["inputSchema"]["type"] == "object" for t in tools.values())


def test_resolve_env_errors_say_what_was_wrong(tmp_path):
    from plugins.exports.mcp_server import resolve_env
    from spade_core.errors import UsageError

    with pytest.raises(UsageError, match="no seed 'nope'"):
        resolve_env("seed:nope")
    with pytest.raises(UsageError, match="no such file"):
        resolve_env(str(tmp_path / "missing.py"))
    with pytest.raises(UsageError, match="not a directory"):
        resolve_env("abc", run_dir=tmp_path / "none")
    program = tmp_path / "env.py"
    program.write_text("class XEnv(ToolUseBaseEnv):\n    pass\n")
    assert resolve_env(str(program)).family == "tool-use"


@pytest.mark.timeout(120)
def test_streamable_http_on_loopback_gives_each_session_its_own_episode():
    import socket
    import subprocess

    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "spade_core.cli", "envs", "serve", "seed:calendar_db", "--mcp",
         "--http", "--port", str(port)], cwd=str(ROOT), env={**os.environ, "OMP_NUM_THREADS": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def session(calls):
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
            async with ClientSession(streams[0], streams[1]) as client:
                await client.initialize()
                return [(await client.call_tool(name, arguments)).content[0].text
                        for name, arguments in calls]

    async def main():
        for _ in range(240):  # the server loads the plugins and its sandbox first
            try:
                return [await session([("cancel_meeting", {"meeting_id": 1})] * 2),
                        await session([("cancel_meeting", {"meeting_id": 1})])]
            except Exception:  # noqa: BLE001 - not listening yet
                if server.poll() is not None:
                    raise
                await anyio.sleep(0.25)
        raise TimeoutError("the server did not answer")

    try:
        first, second = anyio.run(main)
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert first == ["Cancelled #1.", "Error: no meeting #1."]
    assert second == ["Cancelled #1."]  # a new session: a fresh episode


def test_resolve_env_finds_a_record_of_a_run_by_id_prefix(tmp_path):
    """``--run-dir``: the record whose id starts with ENV, with the record's own family."""
    import envmemory.plugin as memory_plugin
    from envmemory.options import MemoryOptions
    from plugins.exports.mcp_server import resolve_env
    from spade_core.components import BuildContext
    from spade_core.errors import UsageError
    from spade_core.records import EnvRecord, program_id

    source = next(p.source for p in FAMILY.seed_programs()
                  if p.description.startswith("calendar_db"))
    memory = memory_plugin.build_memory(MemoryOptions(embedder="hashing"),
                                        BuildContext(run_dir=tmp_path))
    memory.add(EnvRecord(id=program_id(source), source=source, family="tool-use",
                         status="frontier"))
    memory.close()
    served = resolve_env(program_id(source)[:8], run_dir=tmp_path)
    assert served.source == source and served.family == "tool-use"
    assert served.id == program_id(source)
    with pytest.raises(UsageError, match="no record"):
        resolve_env("zzzz", run_dir=tmp_path)

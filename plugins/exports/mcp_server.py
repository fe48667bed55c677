"""``spade envs serve ENV --mcp``: one tool-use environment served over MCP (the Model Context
Protocol), so any MCP client or agent harness can play it without glue.

Each MCP session is one episode, played in this project's sandbox through
:class:`plugins.exports.runtime.SandboxedEpisode` (the program never runs in the server's
process): the session's first tool call resets a fresh instance with the server's seed, the
program's tools are the MCP tools (their JSON schemas as ``inputSchema``), each call is one
``<tool_call>`` step, and a final ``submit_answer`` tool sends ``<answer>...</answer>`` and
returns the episode's reward. The task (the first observation) is in the server's instructions
and in the prompt ``task``. Transports: stdio (the default) or streamable HTTP on 127.0.0.1.
The ``mcp`` package is imported only here, when the command runs.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The tool that ends an episode and returns its reward.
SUBMIT_TOOL = "submit_answer"
#: The prompt that holds the task.
TASK_PROMPT = "task"
_RESULT_PREFIX = "Tool result:\n"

INSTRUCTIONS = """\
This server is one environment of a self-play run: a task with its own tools. Each MCP session
is one episode. Call the tools to complete the task below; their results come back as text.
When the task is complete, call submit_answer with your final answer (or "done" when no value
is asked for): it ends the episode and returns the reward (1.0 solved, 0.0 not). A new session
starts the task afresh.

Task:
{task}"""


@dataclass(frozen=True)
class ServedEnv:
    """The program served: its source, family name and a label for messages."""

    source: str
    family: str
    label: str
    id: str = ""


def resolve_env(env: str, *, run_dir: str | Path | None = None, family: str | None = None,
                families: Mapping[str, Any] | None = None) -> ServedEnv:
    """The environment ``env`` names: with ``run_dir``, the id (or a unique id prefix) of a
    record in that run's memory; else a ``.py`` program file, or ``seed:NAME``, a bundled seed
    of the family (``seed:inventory_orders_db``). ``family`` defaults to ``tool-use`` for files
    and seeds, to the record's own family for a run's record."""
    from spade_core.errors import UsageError
    from spade_core.records import program_id

    if families is None:
        from plugins.exports.runtime import families as installed

        families = installed()
    if run_dir is not None:
        from spade_core.run_memory import open_run_memory

        if not Path(run_dir).is_dir():
            raise UsageError(f"envs serve: --run-dir {run_dir} is not a directory")
        memory = open_run_memory(run_dir)
        try:
            matches = [r for r in memory.records() if r.id.startswith(env)]
        finally:
            memory.close()
        if len(matches) != 1:
            found = "no record" if not matches else f"{len(matches)} records"
            raise UsageError(f"envs serve: {found} of {run_dir} has an id starting with {env!r} "
                             "(`spade memory list` shows the ids)")
        record = matches[0]
        return ServedEnv(record.source, family or record.family, f"{run_dir}:{record.id}",
                         record.id)
    name = family or "tool-use"
    if name not in families:
        raise UsageError(f"envs serve: family {name!r} is not installed; installed: "
                         f"{', '.join(sorted(families))}")
    if env.startswith("seed:"):
        wanted = env[len("seed:"):]
        seeds = {p.description.split(":", 1)[0]: p for p in families[name].seed_programs()}
        if wanted not in seeds:
            raise UsageError(f"envs serve: no seed {wanted!r} in family {name!r}; its seeds: "
                             f"{', '.join(sorted(seeds))}")
        source = seeds[wanted].source
    else:
        path = Path(env)
        if not path.is_file():
            raise UsageError(f"envs serve: {env}: no such file (give a .py program, seed:NAME, "
                             "or an id with --run-dir)")
        source = path.read_text(encoding="utf-8")
    return ServedEnv(source, name, env, program_id(source))


@dataclass
class Episode:
    """One MCP session's episode: a sandbox session, its turns and its result."""

    play: Any
    task: str
    tools: list[dict[str, Any]]
    done: bool = False
    reward: float = 0.0
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class EnvServer:
    """Plays one environment per MCP session; the MCP-independent half of the server (tests
    and the benchmark drive it directly too)."""

    #: Episodes kept at once (one sandbox session each); the oldest is closed beyond this.
    max_sessions = 32

    def __init__(self, env: ServedEnv, *, seed: int = 0, sandbox: str = "process") -> None:
        from plugins.exports.runtime import families

        installed = families()
        if env.family not in installed:
            from spade_core.errors import UsageError

            raise UsageError(f"envs serve: family {env.family!r} is not installed")
        self.env, self.seed, self.sandbox = env, seed, sandbox
        self.family = installed[env.family]
        self._episodes: dict[str, Episode] = {}
        self._lock = threading.Lock()
        preview = self.start()
        try:
            self.task, self.tools = preview.task, preview.tools
        finally:
            preview.play.close()
        if not self.tools:
            from spade_core.errors import UsageError

            raise UsageError(f"envs serve: {env.label} declares no tools (reset's info has no "
                             "'tools'): only tool-use environments can be served over MCP")
        names = [t["function"]["name"] for t in self.tools]
        if SUBMIT_TOOL in names:
            from spade_core.errors import UsageError

            raise UsageError(f"envs serve: {env.label} has a tool named {SUBMIT_TOOL!r}, the "
                             "name the server keeps for ending an episode")

    @property
    def instructions(self) -> str:
        return INSTRUCTIONS.format(task=self.task)

    def start(self) -> Episode:
        """A fresh episode: a sandbox session reset with the server's seed."""
        from plugins.exports.runtime import SandboxedEpisode

        row = {"id": self.env.id, "family": self.env.family, "source": self.env.source}
        play = SandboxedEpisode(row, sandbox=self.sandbox)
        task = play.reset(self.seed)
        tools = self.family.tools_from_info(play.info) or []
        return Episode(play=play, task=task, tools=tools)

    def episode(self, key: str) -> Episode:
        """The episode of session ``key``, started (reset) on its first use."""
        with self._lock:
            episode = self._episodes.get(key)
        if episode is None:
            episode = self.start()
            with self._lock:
                self._episodes[key] = episode
                stale = list(self._episodes)[:-self.max_sessions]
            for old in stale:  # HTTP sessions that went away without a word
                self.end(old)
        return episode

    def end(self, key: str) -> None:
        """Close the episode of session ``key`` (its sandbox session)."""
        with self._lock:
            episode = self._episodes.pop(key, None)
        if episode is not None:
            episode.play.close()

    def mcp_tools(self) -> list[dict[str, Any]]:
        """The MCP tool list: the program's tools (name, description, JSON schema) and
        ``submit_answer``."""
        listed = []
        for tool in self.tools:
            function = tool["function"]
            schema = dict(function.get("parameters") or {})
            schema["type"] = "object"
            schema.setdefault("properties", {})
            listed.append({"name": function["name"], "description": function.get("description")
                           or function["name"], "inputSchema": schema})
        listed.append({"name": SUBMIT_TOOL, "description": "End the episode with your final "
                       "answer ('done' when no value is asked for); returns the reward.",
                       "inputSchema": {"type": "object", "properties": {
                           "answer": {"type": "string", "description": "the final answer"}},
                           "required": ["answer"]},
                       "outputSchema": {"type": "object", "properties": {
                           "reward": {"type": "number"}, "solved": {"type": "boolean"},
                           "observation": {"type": "string"}},
                           "required": ["reward", "solved", "observation"]}})
        return listed

    def call(self, key: str, name: str, arguments: Mapping[str, Any] | None
             ) -> tuple[str, dict[str, Any] | None, bool]:
        """One MCP tool call of session ``key``: ``(text, structured result or None, is_error)``.
        A program tool is one step; ``submit_answer`` is the last one and gives the reward."""
        from plugins.families.solutions import tool_call_action

        episode = self.episode(key)
        arguments = dict(arguments or {})
        with episode.lock:
            if episode.done:
                return (f"The episode is over (reward {episode.reward:g}); open a new MCP "
                        "session to play again.", None, True)
            if name == SUBMIT_TOOL:
                answer = str(arguments.get("answer", ""))
                observation, reward, _, _ = episode.play.step(f"<answer>{answer}</answer>")
                episode.done, episode.reward = True, float(reward)
                result = {"reward": episode.reward, "solved": episode.reward >= 1.0,
                          "observation": observation}
                return json.dumps(result), result, False
            known = {t["function"]["name"] for t in episode.tools}
            if name not in known:
                return (f"Unknown tool {name!r}; tools: {', '.join(sorted(known))}, "
                        f"{SUBMIT_TOOL}.", None, True)
            episode.calls += 1
            observation, reward, done, _ = episode.play.step(tool_call_action(name, arguments))
            text = observation[len(_RESULT_PREFIX):] if observation.startswith(
                _RESULT_PREFIX) else observation
            if done:
                episode.done, episode.reward = True, float(reward)
                text += f"\n\n[The episode is over (reward {episode.reward:g}).]"
            return text, None, False

    def close(self) -> None:
        with self._lock:
            keys = list(self._episodes)
        for key in keys:
            self.end(key)


def build_mcp_server(served: EnvServer) -> Any:
    """The ``mcp`` package's low-level ``Server`` over ``served``: tools, ``submit_answer`` and
    the ``task`` prompt; each MCP session (its ``ServerSession``) gets its own episode."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server

    def session_key(ctx: Any) -> str:
        # The ServerSession object is per request; a session is the stdio connection (one per
        # process) or, over HTTP, the Mcp-Session-Id the client echoes on every request.
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        return (headers.get("mcp-session-id") if headers is not None else None) or "stdio"

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t)
                                            for t in served.mcp_tools()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        key = session_key(ctx)
        text, structured, error = await anyio.to_thread.run_sync(
            served.call, key, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=structured, is_error=error)

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=TASK_PROMPT, description="the episode's task (the environment's first "
            "observation) with how to finish it")])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != TASK_PROMPT:
            raise ValueError(f"unknown prompt {params.name!r}; the prompt is {TASK_PROMPT!r}")
        return types.GetPromptResult(description="the task", messages=[types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=served.instructions))])

    return Server("spade-env", version="1", instructions=served.instructions,
                  on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt)


def serve(served: EnvServer, *, http: bool = False, port: int = 8765) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP, on
    127.0.0.1:``port``, path ``/mcp``)."""
    import anyio

    server = build_mcp_server(served)
    if http:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        print(f"# serving {served.env.label} over MCP at http://127.0.0.1:{port}/mcp",
              file=sys.stderr, flush=True)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return

    async def run_stdio() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run_stdio)

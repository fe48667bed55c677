"""``spade envs serve ENV --mcp``: serve one environment over MCP (the Model Context Protocol).

ENV is a program file (``.py``), ``seed:NAME`` (a bundled seed of the family, e.g.
``seed:inventory_orders_db``), or with ``--run-dir`` the id (or a unique id prefix) of a record
in that run's memory. Each MCP session is one episode played in the sandbox, reset with
``--seed``: the program's tools are MCP tools, ``submit_answer`` ends the episode and returns the
reward, the task is the server's instructions and the prompt ``task``. Stdio by default;
``--http`` serves streamable HTTP on 127.0.0.1 (``--port``, path ``/mcp``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", metavar="ENV",
                        help="a .py program, seed:NAME (a bundled seed), or a record id with "
                             "--run-dir")
    parser.add_argument("--mcp", action="store_true", required=True,
                        help="serve over MCP (the only protocol so far; required)")
    parser.add_argument("--run-dir", metavar="DIR",
                        help="run directory (or one filled by `spade envs import`) whose memory "
                             "holds ENV")
    parser.add_argument("--family", metavar="NAME",
                        help="the program's family (default: tool-use; a record's own family)")
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="seed every episode is reset with (default: 0)")
    parser.add_argument("--sandbox", default="process", metavar="NAME",
                        help="sandbox plugin the episodes run in (default: process)")
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=8765, metavar="PORT",
                        help="port of --http (default: 8765)")


def run(args: argparse.Namespace) -> int:
    from plugins.exports.mcp_server import EnvServer, resolve_env, serve

    served = EnvServer(resolve_env(args.env, run_dir=args.run_dir, family=args.family),
                       seed=args.seed, sandbox=args.sandbox)
    try:
        serve(served, http=args.http, port=args.port)
    finally:
        served.close()
        from plugins.exports.runtime import shared_sandbox

        shared_sandbox(args.sandbox).close()
    return 0

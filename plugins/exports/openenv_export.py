"""``envs export --format openenv``: a folder OpenEnv tooling recognises (``openenv.yaml``,
``server/app.py``) whose environment is :class:`plugins.exports.openenv_env.SpadeEnvironment`
over the exported rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugins.exports.envs import ROWS_FILE, write_jsonl

MANIFEST = """spec_version: 1
name: spade_envs
version: 0.1.0
type: space
runtime: fastapi
app: server.app:app
port: 8000
"""

APP = '''"""OpenEnv server for the exported SPADE environments: `uvicorn server.app:app`.

Needs spade-rl installed: every program runs in its {sandbox!r} sandbox, never in this process."""

from pathlib import Path

from openenv.core.env_server.http_server import create_app

from plugins.exports.openenv_env import SpadeAction, SpadeEnvironment, SpadeObservation

ROWS = Path(__file__).resolve().parent.parent / "{rows}"
SANDBOX = {sandbox!r}


def make_env() -> SpadeEnvironment:
    return SpadeEnvironment(ROWS, sandbox=SANDBOX)


app = create_app(make_env, SpadeAction, SpadeObservation, env_name="spade_envs")
'''

#: What the server needs. openenv-core 0.3.0 is the OpenEnv release that installs next to
#: verifiers 0.4.0 (both on mcp 2, through fastmcp 4); openenv 0.10.0 serves the export as well.
REQUIREMENTS = """spade-rl
# OpenEnv: openenv-core 0.3.0 installs next to verifiers 0.4.0; `openenv==0.10.0` works too
openenv-core==0.3.0
"""

README = """# Exported SPADE environments (OpenEnv)

{count} environments from a spade-rl run, served as one OpenEnv environment.
`reset(seed=..., env_id=...)` (or `index=...`) picks one; the default is `seed % {count}`.
Actions are `SpadeAction(message=...)`; observations carry `text`, `reward`, `done`.

Each program is untrusted code and runs only in spade-rl's `{sandbox}` sandbox: install
spade-rl next to openenv, then `uvicorn server.app:app --port 8000` or, in-process,
`from plugins.exports.openenv_env import SpadeEnvironment; SpadeEnvironment("{rows}")`.
"""


def write_openenv(rows: list[dict[str, Any]], out: Path, *, sandbox: str = "process") -> None:
    write_jsonl(rows, out / ROWS_FILE)
    (out / "openenv.yaml").write_text(MANIFEST)
    (out / "server").mkdir()
    (out / "server" / "__init__.py").write_text("")
    (out / "server" / "app.py").write_text(APP.format(rows=ROWS_FILE, sandbox=sandbox))
    (out / "server" / "requirements.txt").write_text(REQUIREMENTS)
    (out / "README.md").write_text(README.format(count=len(rows), rows=ROWS_FILE,
                                                 sandbox=sandbox))

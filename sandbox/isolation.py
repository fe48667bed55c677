"""How fork servers are launched: bubblewrap, plain ``unshare``, or (by explicit opt-in) nothing.

bubblewrap gives the server new network, pid, ipc, uts and cgroup namespaces, a read-only view of
only the directories Python needs, a private tmpfs for scratch, a minimal ``/dev``, an empty
environment and a reduced capability set. When the host runs as root, no user namespace is
created, so the server can give every worker its own unprivileged uid (a user namespace made by
root would map only uid 0 and leave workers root; see ``docs/sandbox.md``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field, replace
from pathlib import Path

#: Environment the server starts with (bubblewrap also clears everything else).
SERVER_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}
#: Worker uids: each sandbox draws a random block of ``UID_SPAN`` uids at or above ``UID_FLOOR``
#: (so two sandboxes on one machine never share a uid); server ``i`` uses the ``i``-th
#: ``UID_BLOCK`` of it.
UID_FLOOR = 1 << 20
UID_BLOCK = 4096
UID_SPAN = 256 * UID_BLOCK


def draw_uid_base() -> int:
    """A random, ``UID_SPAN``-aligned first uid below the kernel's 32-bit limit."""
    import random

    blocks = ((1 << 32) - 2 - UID_FLOOR) // UID_SPAN
    return UID_FLOOR + random.SystemRandom().randrange(blocks) * UID_SPAN
#: Capabilities the server keeps: enough to give workers their own uid, chown their scratch
#: directory, kill them and clean up after them. Workers keep none.
SERVER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_KILL", "CAP_DAC_OVERRIDE",
               "CAP_FOWNER")


@dataclass(frozen=True)
class Launch:
    """A way to start the fork server, and what it protects."""

    method: str  # "bwrap", "unshare" or "none"
    prefix: tuple[str, ...]
    drop_uid: bool
    scratch_root: str | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: The interpreter the servers run ("": this process's own, ``sys.executable``).
    python: str = ""


def _readonly_paths(extra: tuple[str, ...] = ()) -> list[str]:
    """Directories the server must read: system libraries, the interpreter, the venv, the
    ``sandbox`` package and the light ``spade_core`` package whose contract rules the worker
    applies (each bound at its own path so editable installs keep working), and ``extra`` (the
    directories of another interpreter the servers run on)."""
    import sandbox
    import spade_core

    paths = {"/usr", sys.base_prefix, sys.prefix, *extra,
             *(str(Path(list(package.__path__)[0]).resolve()) for package in (sandbox, spade_core))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        value = sysconfig.get_paths().get(key)
        if value:
            paths.add(value)
    for entry in sys.path:
        if entry.endswith("site-packages") and os.path.isdir(entry):
            paths.add(entry)
    real = {str(Path(p).resolve()) for p in paths if p and os.path.exists(p)}
    # Drop paths already covered by a parent in the set.
    ordered = sorted(real, key=len)
    kept: list[str] = []
    for path in ordered:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def bwrap_prefix(bwrap: str, as_root: bool, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    args = [bwrap, "--die-with-parent", "--new-session"]
    if as_root:
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                 "--unshare-cgroup-try", "--cap-drop", "ALL"]
        for cap in SERVER_CAPS:
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-all"]
    # The private scratch tmpfs comes first: read-only binds that live under /tmp (a project or
    # venv checked out there, as CI may do) are then mounted on top of it instead of hidden by it.
    args += ["--tmpfs", "/tmp"]
    paths = _readonly_paths(extra)
    # Directories bwrap creates on the way to a bind are mode 0700; make them traversable so
    # workers (unprivileged uids) can still import what the server did not import up front.
    parents = sorted({str(parent) for path in paths for parent in Path(path).parents
                      if str(parent) != "/"}, key=len)
    for parent in parents:
        if not any(parent == p or parent.startswith(p.rstrip("/") + "/") for p in paths):
            args += ["--perms", "0755", "--dir", parent]
    for path in paths:
        args += ["--ro-bind", path, path]
    for link in ("lib", "lib64", "bin", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), f"/{link}"]
        elif target.is_dir():
            args += ["--ro-bind", str(target), f"/{link}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp", "--clearenv"]
    for key, value in SERVER_ENV.items():
        args += ["--setenv", key, value]
    args.append("--")
    return tuple(args)


def choose(preference: str = "auto", allow_unisolated: bool = False) -> Launch:
    """Pick the strongest available launcher (or the one asked for).

    Raises ``RuntimeError`` when the preference cannot be met, or when nothing isolates and the
    caller did not opt in to running without isolation.
    """
    as_root = os.geteuid() == 0
    if preference == "none" and not allow_unisolated:
        raise RuntimeError("isolation 'none' runs untrusted programs without OS isolation; "
                           "it needs the sandbox option allow_unisolated: true")
    bwrap = shutil.which("bwrap") or ("/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap")
                                       else None)
    unshare = shutil.which("unshare")
    if preference in ("auto", "bwrap") and bwrap:
        notes = () if as_root else (
            "running unprivileged: workers share the host user's uid inside a user namespace",)
        return Launch("bwrap", bwrap_prefix(bwrap, as_root), as_root, "/tmp", notes)
    if preference == "bwrap":
        raise RuntimeError("isolation 'bwrap' was asked for but bubblewrap is not installed "
                           "(Debian package 'bubblewrap')")
    if preference in ("auto", "unshare") and unshare:
        flags = ["--net", "--pid", "--fork", "--ipc", "--uts", "--kill-child"]
        if not as_root:
            flags.insert(0, "--map-root-user")
        return Launch("unshare", (unshare, *flags, "--"), as_root, None,
                      ("no filesystem view: workers see the host filesystem read-only through "
                       "their unprivileged uid",))
    if preference == "unshare":
        raise RuntimeError("isolation 'unshare' was asked for but util-linux unshare is missing")
    if allow_unisolated:
        return Launch("none", (), as_root, None,
                      ("NO OS ISOLATION: programs can reach the network and the filesystem",))
    raise RuntimeError("no OS isolation is available (install bubblewrap, or util-linux "
                       "unshare); to run untrusted programs without it anyway set the sandbox "
                       "option allow_unisolated: true")


def interpreter_paths(python: str) -> tuple[str, ...]:
    """The directories interpreter ``python`` reads its standard library and packages from (its
    venv, its base installation, its ``sys.path``), asked of it once."""
    code = ("import json, sys, sysconfig; print(json.dumps([sys.prefix, sys.base_prefix, "
            "*sysconfig.get_paths().values(), *sys.path]))")
    try:
        done = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True,
                              timeout=60, check=True)
        found = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise RuntimeError(f"the interpreter {python} does not run: {exc}") from None
    return tuple(sorted({str(p) for p in found if p and os.path.isdir(p)}))


def on_interpreter(launch: Launch, python: str) -> Launch:
    """``launch`` with its servers run by ``python`` (an environment of its own, such as a
    benchmark suite's): under bubblewrap that interpreter's directories are bound read-only
    too. The servers still import this process's ``sandbox`` package, so ``python`` needs
    RestrictedPython."""
    if launch.method != "bwrap":
        return replace(launch, python=python)
    # Under bubblewrap the server drops workers' uids exactly when it runs as root (choose()).
    prefix = bwrap_prefix(launch.prefix[0], launch.drop_uid, interpreter_paths(python))
    return replace(launch, prefix=prefix, python=python)


def server_command(launch: Launch, control_fd: int, index: int, uid_base: int) -> list[str]:
    """The full command line of fork server ``index``."""
    code = "import sandbox.server as s; s.main()"
    import sandbox

    package_parent = str(Path(list(sandbox.__path__)[0]).resolve().parent)
    code = f"import sys; sys.path.append({package_parent!r}); " + code
    argv = [*launch.prefix, launch.python or sys.executable, "-I", "-B", "-c", code,
            "--control-fd", str(control_fd)]
    if launch.drop_uid:
        argv += ["--uid-base", str(uid_base + index * UID_BLOCK), "--uid-count", str(UID_BLOCK)]
    if launch.scratch_root:
        argv += ["--scratch-root", launch.scratch_root]
    return argv

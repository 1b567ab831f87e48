"""Run `jupcron` commands as real processes without paying Python's start-up each time.

A test run calls the CLI some four hundred times, and each `python -m jupcron` spends
most of its second importing SQLAlchemy, pydantic, solders and the command modules.
Here one server process per test worker imports them once and forks a child for each
command. The child is a process of its own, like the one `subprocess.run` would start:
its own pid and process group, argv, environment, working directory, stdin, stdout and
stderr (files), and an exit status that the caller reads; it runs ``python -m jupcron``'s
``__main__`` through `runpy`, then what an exiting interpreter runs (non-daemon threads
joined, atexit handlers, streams flushed). Only the interpreter's start-up and the
imports are shared.

`run` has the shape of ``subprocess.run(capture_output=True, text=True, check=False)``:
a `CompletedProcess`, and `subprocess.TimeoutExpired` (the child's process group killed)
when it runs past `timeout`. `start` forks a background command the same way: the
daemons of tests/fixtures/daemon.py. The real entry point is still started as a fresh
interpreter by the tests that are about it (`test_readme`, `test_package_name`,
tests/system) and by the tests that start their own processes.

Protocol: one JSON line a connection over a Unix socket; the server answers
``{"pid": N}`` once the child is forked, then ``{"returncode": R}`` when it ends.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# what the server imports before it forks: the CLI, every command module, the drivers
PRELOAD = (
    "jupcron.cli.main",
    "jupcron.cli.db", "jupcron.cli.plans", "jupcron.cli.fire", "jupcron.cli.audit",
    "jupcron.cli.tx", "jupcron.cli.wallet", "jupcron.cli.portfolio", "jupcron.cli.settle",
    "jupcron.cli.report", "jupcron.cli.control", "jupcron.cli.status",
    "jupcron.cli.configcheck", "jupcron.cli.run", "jupcron.app",
    "sqlalchemy.dialects.sqlite", "sqlalchemy.dialects.postgresql.psycopg",
)  # fmt: skip


# -- the server: one a test worker ------------------------------------------------------


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the command's process, run it, exit. Never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()  # TZ as the command's environment says
        for fd, path, flags in (
            (0, request["stdin"], os.O_RDONLY),
            (1, request["stdout"], os.O_WRONLY | os.O_APPEND),
            (2, request["stderr"], os.O_WRONLY | os.O_APPEND),
        ):
            if fd == 2 and path == request["stdout"]:
                os.dup2(1, 2)  # stderr=STDOUT: one open file, as Popen makes it
                continue
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        import random

        random.seed()  # a fresh interpreter's random state, not the server's
        code = _run_main(request["module"], request["argv"])
    except BaseException:  # said on the child's stderr, like an interpreter
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _run_main(module: str, argv: list[str]) -> int:
    """``python -m module argv...`` in this process: the exit status an interpreter gives."""
    import runpy
    import traceback

    sys.argv = [module, *argv]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:  # an uncaught exception: traceback, status 1
        traceback.print_exc()
        code = 1
    _finalize()
    return code


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finalize() -> None:
    """What an exiting interpreter does before it ends: join non-daemon threads, run
    the atexit handlers, flush the standard streams."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _handle(conn: socket.socket) -> None:
    """In a forked handler: fork the command's child, say its pid, wait, say its status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with conn, conn.makefile("rwb") as stream:
        request = json.loads(stream.readline())
        pid = os.fork()
        if pid == 0:  # the command keeps no end of the connection (its file holds one)
            stream.close()
            conn.close()
            _child(request)
        stream.write(json.dumps({"pid": pid}).encode() + b"\n")
        stream.flush()
        _, status = os.waitpid(pid, 0)
        stream.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
        stream.write(b"\n")
        stream.flush()


def serve(path: str) -> None:
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers reap themselves
    parent = os.getppid()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(64)
        listener.settimeout(1.0)
        print("ready", flush=True)
        while os.getppid() == parent:  # the test worker gone: so is this server
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            if os.fork() == 0:
                listener.close()
                try:
                    _handle(conn)
                finally:
                    os._exit(0)
            conn.close()


# -- the client: what tests call --------------------------------------------------------


class _Server:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._dir = ""
        atexit.register(self.stop)

    def path(self) -> str:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            return os.path.join(self._dir, "s")

    def _start(self) -> None:
        self.stop()  # a server that died: its pipe and folder
        self._dir = tempfile.mkdtemp(prefix="jupcron-clifork-")
        env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG",)}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.clifork", os.path.join(self._dir, "s")],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the CLI fork server did not start: {line!r}")

    def stop(self) -> None:
        """The server ended, its pipe closed and its socket's folder removed."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(5)
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = ""


_server = _Server()


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    input: str | None = None,
    timeout: float = 60,
    cwd: str | os.PathLike[str] | None = None,
    module: str = "jupcron",
) -> subprocess.CompletedProcess[str]:
    """``python -m module argv...`` as a forked child of the server; see the module doc."""
    encoding = locale.getpreferredencoding(False)
    with tempfile.TemporaryDirectory(prefix="jupcron-cli-") as tmp:
        stdin = os.path.join(tmp, "in") if input is not None else os.devnull
        if input is not None:
            Path(stdin).write_text(input, encoding=encoding)
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        Path(out).touch()
        Path(err).touch()
        request = {
            "module": module, "argv": list(argv), "env": dict(env),
            "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
            "stdin": stdin, "stdout": out, "stderr": err, "umask": _umask(),
        }  # fmt: skip
        returncode = _exchange(request, timeout, [sys.executable, "-m", module, *argv])
        with open(out, encoding=encoding) as o, open(err, encoding=encoding) as e:
            return subprocess.CompletedProcess(
                [sys.executable, "-m", module, *argv], returncode, o.read(), e.read()
            )


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


class ForkedProcess:
    """A command forked by the server and still running: the part of `subprocess.Popen`
    the tests use (pid, poll, wait, send_signal, terminate, kill, returncode)."""

    def __init__(self, request: dict[str, Any], args: list[str]) -> None:
        self.args = args
        self.returncode: int | None = None
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.connect(_server.path())
        self._conn.sendall(json.dumps(request).encode() + b"\n")
        self._buffer = b""
        self.pid = int(json.loads(self._line(None))["pid"])

    def _line(self, timeout: float | None) -> bytes:
        """The server's next line; `TimeoutError` leaves what was read in the buffer."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(1e-4, deadline - time.monotonic())
            self._conn.settimeout(left)
            chunk = self._conn.recv(4096)
            if not chunk:
                raise EOFError("the CLI fork server hung up")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            try:
                answer = self._line(timeout)
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
            self.returncode = int(json.loads(answer)["returncode"])
            self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.wait(0.001)
        return None

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdout: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    module: str = "jupcron",
) -> ForkedProcess:
    """``python -m module argv...`` started in the background, stdout and stderr both
    appended to the file `stdout` (as ``Popen(stdout=file, stderr=STDOUT)``)."""
    request = {
        "module": module, "argv": list(argv), "env": dict(env),
        "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
        "stdin": os.devnull, "stdout": os.fspath(stdout), "stderr": os.fspath(stdout),
        "umask": _umask(),
    }  # fmt: skip
    return ForkedProcess(request, [sys.executable, "-m", module, *argv])


def _exchange(request: dict[str, Any], timeout: float, args: list[str]) -> int:
    child = ForkedProcess(request, args)
    try:
        return child.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)  # the kill's status: the connection ends with it
        raise


if __name__ == "__main__":
    serve(sys.argv[1])

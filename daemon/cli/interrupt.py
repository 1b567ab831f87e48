"""Ctrl-C (SIGINT) and SIGTERM during an operator's command: one line, and the status
a shell gives a process ended by that signal (130, 143).

Ctrl-C raises `KeyboardInterrupt` where the command is: what it had begun is undone
on the way out (a transaction rolled back: an interrupted `plans apply` leaves the
store as it was; the worker processes of `plans apply -j` shut down), and
`jupcron.cli.main` says ``interrupted``. SIGTERM (a wrapper: ``timeout``, a systemd
stop of a `jupcronctl` command, ``kill PID``) ended the process where it was, with
nothing said and, for `plans apply -j`, its workers left behind; it now raises
`Terminated` the same way. `Terminated` is a `KeyboardInterrupt`, not one of our
errors: what cleans up after Ctrl-C cleans up after it, and no ``except Exception``
on the way takes it for a failure to carry on past. A second SIGTERM ends the
process at once (the default again): a cleanup that hangs does not hold a stop up.

The commands in `OWN_SIGNALS` handle their signals themselves and are left alone:
`run` (the daemon's stop), `emulator` and `demo`. `jupcron fire` takes SIGTERM as its
Ctrl-C too: a run not yet signed is withdrawn, a signed one named for recovery.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_TERMINATED = 143  # 128 + SIGTERM

OWN_SIGNALS = frozenset({"run", "emulator", "demo"})


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: raised where the command was, as Ctrl-C's interrupt is."""


def _terminated(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM: end now
    raise Terminated


def terminate_as_interrupt() -> Callable[[], None]:
    """From now on SIGTERM raises `Terminated` (in the main thread only, where Python
    runs signal handlers); returns what puts the handler before back (an in-process
    caller, a test's, keeps its own)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before = signal.signal(signal.SIGTERM, _terminated)
    if before is None:  # set outside Python: the default is what we can put back
        before = signal.SIG_DFL

    def restore() -> None:
        signal.signal(signal.SIGTERM, before)

    return restore


def ended() -> None:
    """The command has ended (its line said; what it wrote committed or rolled back):
    Ctrl-C is ignored while Python exits (it joins the threads left, a process pool's,
    in a moment), and SIGTERM ends the process at once, as its default does. Python's
    handler printed a traceback of its shutdown ("Exception ignored in: <module
    'threading'>") when an operator pressed Ctrl-C a second time; killed by it there
    instead, the pool's semaphores were left to multiprocessing's resource tracker,
    which warned of them. The process's entry point only (an in-process caller keeps
    its handlers)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def said(interrupt: KeyboardInterrupt) -> tuple[str, int]:
    """The line and the exit status for an interrupted command."""
    if isinstance(interrupt, Terminated):
        return "terminated", EXIT_TERMINATED
    return "interrupted", EXIT_INTERRUPTED


def end(interrupt: KeyboardInterrupt) -> NoReturn:
    """End the command as interrupted: its line on stderr, its status (`said`)."""
    line, code = said(interrupt)
    sys.stderr.write(f"{line}\n")
    raise SystemExit(code) from None


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM) an error was raised from, if any. Python 3.11 wraps a
    `KeyboardInterrupt` that strikes in a class's ``__set_name__`` (while a module
    defines its classes: pydantic's, at import) in a ``RuntimeError`` caused by it."""
    seen: BaseException | None = exc
    for _ in range(16):  # a chain, not a cycle
        if seen is None:
            return None
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None

"""`jupcronctl`: one `jupcron` command on the systemd install, run as the service runs.

    sudo jupcronctl status
    sudo jupcronctl pause --all --reason "incident"
    sudo jupcronctl fire weekly-sol-dca

It reads jupcron.service as systemd has it (``systemctl cat``: the unit file and
its drop-ins, so credentials changed with ``systemctl edit`` come along) and
runs ``jupcron --config … COMMAND ARGS`` (the unit's own ``ExecStart`` with
``run`` replaced) through ``systemd-run --wait --pipe`` with the unit's user,
credentials, state directory, environment and sandbox: the daemon's dynamic UID
(the database keeps one owner) and its ``$CREDENTIALS_DIRECTORY``. What the unit
says about the daemon's life (type, start command, timeouts, watchdog,
restarts, where output goes) is left out. The output and the exit status are
the command's own.

Standard library only: it runs as root on the host, outside the sandbox.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

UNIT = "jupcron.service"
USAGE = """\
usage: jupcronctl [--unit UNIT] COMMAND [ARGS...]

Runs `jupcron COMMAND ARGS` as jupcron.service runs: its user, config, credentials
and sandbox (read from `systemctl cat UNIT`). Run it as root (sudo). Examples:

  sudo jupcronctl status
  sudo jupcronctl pause --all --reason "incident"      # resume --all to undo
  sudo jupcronctl fire weekly-sol-dca                  # exit 0: the run succeeded
  sudo jupcronctl audit --plan weekly-sol-dca
  sudo jupcronctl report

Every `jupcron` command but run, demo and emulator; `jupcronctl COMMAND --help`
shows a command's own options.
"""
# commands that are not a daily command of the installed service
REFUSED = {
    "run": "the daemon itself runs as the service: sudo systemctl start jupcron",
    "demo": "the demo runs from a checkout, not as the service",
    "emulator": "the emulator runs from a checkout, not as the service",
}
# the unit's settings about the daemon's life, not the command's: left out
LIFE_PREFIXES = ("Exec", "Timeout", "Restart", "Watchdog", "Standard")
LIFE = frozenset({
    "Type", "NotifyAccess", "RemainAfterExit", "PIDFile", "GuessMainPID", "BusName",
    "KillMode", "KillSignal", "FinalKillSignal", "SendSIGKILL", "SendSIGHUP",
    "SuccessExitStatus", "RuntimeMaxSec", "RuntimeRandomizedExtraSec", "ExitType",
    "FileDescriptorStoreMax", "OOMPolicy", "Sockets", "SyslogIdentifier", "NonBlocking",
    "USBFunctionDescriptors", "USBFunctionStrings",
})  # fmt: skip
# settings an empty assignment resets together (systemd keeps them in one list)
RESET_TOGETHER = {
    "LoadCredential": ("LoadCredential", "LoadCredentialEncrypted"),
    "LoadCredentialEncrypted": ("LoadCredential", "LoadCredentialEncrypted"),
    "SetCredential": ("SetCredential", "SetCredentialEncrypted"),
    "SetCredentialEncrypted": ("SetCredential", "SetCredentialEncrypted"),
}
# settings whose empty assignment is a value (the empty capability set), not a reset
EMPTY_IS_A_VALUE = frozenset({"CapabilityBoundingSet", "AmbientCapabilities"})
# systemd's own exit statuses when it could not start the command (EXIT_CHDIR…)
SETUP_FAILED = range(200, 250)


class CtlError(Exception):
    """A problem jupcronctl explains in one line (exit 2 for usage, else 1)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Request:
    unit: str
    command: list[str]  # COMMAND ARGS, as given


def parse_args(argv: Sequence[str]) -> Request | None:
    """``None`` for ``--help``; `CtlError` (code 2) for bad usage."""
    args = list(argv)
    unit = UNIT
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("-h", "--help"):
            return None
        if option == "--unit" or option.startswith("--unit="):
            value = option.partition("=")[2] if "=" in option else (args.pop(0) if args else "")
            if not value:
                raise CtlError("--unit needs a unit name (e.g. jupcron.service)", 2)
            unit = value if "." in value else f"{value}.service"
            continue
        if option in ("-c", "--config"):
            raise CtlError(
                f"jupcronctl takes the config from {unit}'s ExecStart: give the command only "
                "(edit the unit to use another config)", 2,
            )  # fmt: skip
        raise CtlError(f"unknown option {option!r} before the command (see jupcronctl --help)", 2)
    if not args:
        raise CtlError("no command given (e.g. jupcronctl status; see jupcronctl --help)", 2)
    if args[0] in REFUSED:
        raise CtlError(f"jupcronctl does not run {args[0]!r}: {REFUSED[args[0]]}", 2)
    return Request(unit=unit, command=args)


@dataclass(frozen=True)
class Unit:
    exec_start: str
    properties: list[tuple[str, str]]  # the command's settings, in the unit's order


def read_unit(text: str, name: str = UNIT) -> Unit:
    """The ``[Service]`` settings of ``systemctl cat`` output (the file, then its
    drop-ins): empty assignments reset, life settings left out."""
    section = ""
    settings: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith(("#", ";"))):
            continue
        if pending and line.startswith(("#", ";")):
            continue  # a comment inside a continued line
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Service" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if value == "":
            together = RESET_TOGETHER.get(key, (key,))
            settings = [(k, v) for k, v in settings if k not in together]
            if key in EMPTY_IS_A_VALUE:
                settings.append((key, ""))
        else:
            settings.append((key, value))
    starts = [v for k, v in settings if k == "ExecStart"]
    if not starts:
        raise CtlError(f"{name} has no ExecStart: is it jupcron's unit?")
    kept = [(k, v) for k, v in settings if not _life(k)]
    return Unit(exec_start=starts[-1], properties=kept)


def _life(key: str) -> bool:
    return key in LIFE or key.startswith(LIFE_PREFIXES)


def base_command(exec_start: str, name: str = UNIT) -> list[str]:
    """``jupcron --config …`` from the unit's ``ExecStart=… run``."""
    words = shlex.split(exec_start.lstrip("@-:+!"))
    if len(words) < 2 or words[-1] != "run":
        raise CtlError(f"{name}'s ExecStart does not end with 'run': {exec_start!r}")
    return words[:-1]


def expand(value: str, transient: str) -> str:
    """The specifiers systemd-run does not expand: ``%d`` (the credentials folder of
    the transient unit) and ``%%``; any other is refused."""
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char != "%":
            out.append(char)
            continue
        spec = next(chars, "")
        if spec == "%":
            out.append("%")
        elif spec == "d":
            out.append(f"/run/credentials/{transient}")
        else:
            raise CtlError(f"cannot carry the specifier %{spec} of {value!r} to the command")
    return "".join(out)


def transient_name(pid: int) -> str:
    """The transient unit's name (its journal, its ``/run/credentials/NAME``)."""
    return f"jupcronctl-{pid}.service"


def systemd_run(request: Request, unit: Unit, *, operator: str, pid: int) -> list[str]:
    """The ``systemd-run`` command line for `request` under `unit`'s settings."""
    transient = transient_name(pid)
    argv = [
        "systemd-run", "--quiet", "--wait", "--pipe", "--collect", f"--unit={transient}",
        "--service-type=exec", f"--property=Description=jupcronctl {request.command[0]}",
        f"--setenv=SUDO_USER={operator}",  # who, for `pause --by` and the audit trail
    ]  # fmt: skip
    for key, value in unit.properties:
        argv.append(f"--property={key}={expand(value, transient)}")
    return [*argv, "--", *base_command(unit.exec_start, request.unit), *request.command]


def operator_name(env: Mapping[str, str]) -> str:
    for name in ("SUDO_USER", "USER", "LOGNAME"):
        if env.get(name):
            return env[name]
    return "root"


def run(argv: Sequence[str]) -> int:
    request = parse_args(argv)
    if request is None:
        sys.stdout.write(USAGE)
        return 0
    if os.geteuid() != 0:
        raise CtlError("run it as root (sudo jupcronctl …): it starts the command as the "
                       "service's user")  # fmt: skip
    for tool in ("systemctl", "systemd-run"):
        if shutil.which(tool) is None:
            raise CtlError(f"{tool} not found: jupcronctl is for the systemd install")
    shown = subprocess.run(
        ["systemctl", "cat", "--no-pager", "--", request.unit],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if shown.returncode != 0 or not shown.stdout.strip():
        raise CtlError(f"{request.unit} is not installed (see systemd/README.md, Install)")
    unit = read_unit(shown.stdout, request.unit)
    argv_run = systemd_run(request, unit, operator=operator_name(os.environ), pid=os.getpid())
    try:
        code = subprocess.run(argv_run, check=False).returncode
    except KeyboardInterrupt:  # systemd-run stops waiting; a run under way goes on
        return 130
    if code in SETUP_FAILED:
        transient = transient_name(os.getpid())
        sys.stderr.write(
            f"jupcronctl: systemd could not start the command (exit {code}); "
            f"see journalctl -u {transient}\n"
        )
    return code


def main(argv: Sequence[str] | None = None) -> None:
    try:
        code = run(sys.argv[1:] if argv is None else argv)
    except CtlError as exc:
        sys.stderr.write(f"jupcronctl: {exc}\n")
        code = exc.code
    sys.exit(code)


if __name__ == "__main__":
    main()

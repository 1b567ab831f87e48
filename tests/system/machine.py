"""A real systemd as PID 1 of namespaces of its own: a small "machine" for tests/system.

`Machine.boot()` makes a sub-cgroup of ours in every cgroup hierarchy, moves a
launcher into them and runs ``unshare --pid --fork --mount --mount-proc --cgroup
--uts --ipc`` with `boot.sh` as the new PID 1 (the host's files read-only, tmpfs
for /run, /tmp and /dev, copy-on-write /etc, /var, /opt, /root, /usr/local, a few kernel
capabilities dropped from the bounding set), which then becomes systemd with
``container=`` set. Commands reach it with ``nsenter -t PID -a``. The network
is the host's, so the machine's services reach an emulator on host loopback.

`Machine.shutdown()` powers it off (SIGKILL of its PID 1 if that does not end
it) and removes the sub-cgroups; `Machine.leftovers()` lists whatever is still
there (processes in its PID namespace, cgroups, mounts on the host).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BOOT = Path(__file__).with_name("boot.sh")
SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# the host's kernel is not the machine's to change: no modules, clock, raw I/O, kernel
# log, audit rules, network configuration (the network namespace is the host's)
DROPPED_CAPS = (
    "sys_module", "sys_time", "sys_rawio", "syslog", "wake_alarm", "block_suspend",
    "mac_admin", "mac_override", "audit_control", "audit_read", "net_admin",
)  # fmt: skip
TOOLS = ("unshare", "nsenter", "setpriv", "mount")
SYSTEMD = Path("/lib/systemd/systemd")
# where the machine mounts things: a leak of its mounts would show up at these on the host
MOUNTED_INSIDE = (
    "/run",
    "/tmp",
    "/etc",
    "/var",
    "/opt",
    "/root",
    "/usr/local",
    "/dev",
    "/sys",
    "/proc",
)


class MachineError(RuntimeError):
    """The machine could not be booted or reached."""


def wait_until(what: str, check: Callable[[], Any], timeout: float, every: float = 0.2) -> Any:
    """Poll `check` until it returns something truthy; MachineError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise MachineError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


# ---- why a machine cannot be booted here (the suite skips with this reason) ----------


def cannot_boot_reason() -> str | None:
    """None if this machine can boot systemd in namespaces, else why not."""
    if os.uname().sysname != "Linux":
        return "not Linux"
    if os.geteuid() != 0:
        return "needs root (to create namespaces, mounts and cgroups)"
    if not SYSTEMD.exists():
        return f"{SYSTEMD} is missing (run tests/ensure-systemd.sh)"
    missing = [tool for tool in (*TOOLS, "systemctl", "journalctl") if shutil.which(tool) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    if "overlay" not in Path("/proc/filesystems").read_text():
        return "the kernel has no overlay filesystem"
    try:
        own_cgroups()
    except MachineError as exc:
        return str(exc)
    probe = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount", "--mount-proc", "--cgroup", "--uts", "--ipc",
         "--propagation", "private", "mount", "-t", "tmpfs", "probe", "/tmp"],
        capture_output=True, text=True, timeout=30, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"cannot create namespaces and mount in them: {probe.stderr.strip()}"
    return None


def python_for_venv_reason() -> str | None:
    """None if ``python3`` on sudo's PATH (what the README's ``sudo python3 -m venv`` runs)
    is 3.11 or newer and can make a virtualenv with pip, else why not."""
    probe = "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"
    try:
        done = subprocess.run(
            ["python3", "-c", probe], env={"PATH": SECURE_PATH}, capture_output=True,
            timeout=30, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        return f"no python3 on {SECURE_PATH}"
    if done.returncode != 0:
        return "python3 on sudo's PATH is older than 3.11 or lacks venv/ensurepip (python3-venv)"
    return None


# ---- cgroups ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hierarchy:
    mountpoint: Path
    current: Path  # this process's cgroup in it

    @property
    def is_cpuset(self) -> bool:
        return (self.current / "cpuset.cpus").exists()


def own_cgroups() -> list[Hierarchy]:
    """Our cgroup's directory in every mounted hierarchy (v1 controllers and v2)."""
    mounts: dict[frozenset[str], tuple[Path, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        root, mountpoint = fields[3], fields[4]
        if tail[0] == "cgroup2":
            key: frozenset[str] = frozenset()
        else:
            v1 = _v1_controllers()
            key = frozenset(o for o in tail[2].split(",") if o.startswith("name=") or o in v1)
        mounts.setdefault(key, (Path(mountpoint), root))
    found: list[Hierarchy] = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        key = frozenset(c for c in controllers.split(",") if c)
        if key not in mounts:
            if not key:
                continue  # a v1-only machine has a v2 line without a v2 mount
            raise MachineError(f"cgroup hierarchy {controllers!r} is not mounted")
        mountpoint, root = mounts[key]
        relative = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
        current = (mountpoint / relative).resolve()
        if not os.access(current, os.W_OK):
            raise MachineError(f"cannot make cgroups under {current}")
        found.append(Hierarchy(mountpoint, current))
    if not found:
        raise MachineError("no cgroup hierarchy is mounted")
    return found


def _v1_controllers() -> set[str]:
    return {line.split()[0] for line in Path("/proc/cgroups").read_text().splitlines()[1:]}


def cgroup_layout() -> str:
    """``unified`` (cgroup2 at /sys/fs/cgroup), ``hybrid`` (v1 and /sys/fs/cgroup/unified)
    or ``legacy`` (v1 only): the machine mounts the same layout for its systemd."""
    kinds = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        kinds[left.split()[4]] = right.split()[0]
    if kinds.get("/sys/fs/cgroup") == "cgroup2":
        return "unified"
    return "hybrid" if kinds.get("/sys/fs/cgroup/unified") == "cgroup2" else "legacy"


def _remove_cgroup(top: Path, timeout: float = 15.0) -> None:
    """rmdir a cgroup and every cgroup under it, deepest first (they empty as tasks exit)."""

    def attempt() -> bool:
        if not top.exists():
            return True
        for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
            try:
                os.rmdir(dirpath)
            except OSError:
                return False
        return not top.exists()

    wait_until(f"cgroup {top} to be removable", attempt, timeout)


# ---- the machine -------------------------------------------------------------------------


@dataclass
class Machine:
    launcher: subprocess.Popen[bytes]
    pid: int  # host PID of its PID 1 (systemd)
    pidns: str  # its PID namespace, as /proc/PID/ns/pid reads
    cgroups: list[Path]
    console: Path  # systemd's own output
    host_mounts_before: set[str] = field(default_factory=set)
    stopped: bool = False

    # -- life -----------------------------------------------------------------------------

    @classmethod
    def boot(cls, console: Path, timeout: float = 90.0) -> Machine:
        name = f"jupcron-systest-{os.getpid()}-{secrets.token_hex(3)}"
        before = host_mount_targets()
        made: list[Path] = []
        try:
            for hierarchy in own_cgroups():
                sub = hierarchy.current / name
                sub.mkdir()
                made.append(sub)
                if hierarchy.is_cpuset:  # a new cpuset is empty until given CPUs and memory
                    for knob in ("cpuset.cpus", "cpuset.mems"):
                        (sub / knob).write_text((hierarchy.current / knob).read_text())
        except OSError as exc:
            for sub in made:
                _remove_cgroup(sub)
            raise MachineError(f"cannot make a cgroup: {exc}") from exc
        drop = ",".join(f"-{cap}" for cap in DROPPED_CAPS)
        script = (
            'for f in "$@"; do echo $$ > "$f" || exit 97; done; '
            "exec unshare --pid --fork --mount --mount-proc --cgroup --uts --ipc "
            f"--propagation private setpriv --bounding-set={drop} /bin/bash {BOOT}"
        )
        procs = [str(sub / "cgroup.procs") for sub in made]
        with console.open("wb") as out:
            launcher = subprocess.Popen(
                ["/bin/sh", "-c", script, "sh", *procs],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env={"PATH": SECURE_PATH, "LANG": "C.UTF-8", "SYSTEST_CGROUPS": cgroup_layout()},
                start_new_session=True,
            )  # fmt: skip

        def pid1() -> int | None:
            if launcher.poll() is not None:
                raise MachineError(
                    f"the machine's PID 1 exited ({launcher.returncode}): "
                    + console.read_text(errors="replace")[-2000:]
                )
            children = Path(f"/proc/{launcher.pid}/task/{launcher.pid}/children")
            try:
                kids = children.read_text().split()
            except OSError:
                return None
            return int(kids[0]) if kids else None

        try:
            pid = wait_until("the machine's PID 1", pid1, 30, every=0.05)
            machine = cls(
                launcher=launcher, pid=pid, pidns=os.readlink(f"/proc/{pid}/ns/pid"),
                cgroups=made, console=console, host_mounts_before=before,
            )  # fmt: skip
        except BaseException:
            _kill_launcher(launcher)
            for sub in made:
                _remove_cgroup(sub)
            raise
        try:
            machine.wait_booted(timeout)
        except BaseException:
            machine.shutdown()
            raise
        return machine

    def wait_booted(self, timeout: float) -> str:
        def state() -> str | None:
            if self.launcher.poll() is not None:
                raise MachineError(
                    "systemd exited while booting: "
                    + self.console.read_text(errors="replace")[-2000:]
                )
            done = self.run("systemctl", "is-system-running", "--wait", check=False, timeout=60)
            text = done.stdout.strip()
            return text if text in ("running", "degraded") else None

        return str(wait_until("the machine to boot", state, timeout, every=0.3))

    def shutdown(self, timeout: float = 60.0) -> None:
        """Power off; SIGKILL its PID 1 (the kernel then kills every process in its PID
        namespace) if it is not gone in time; remove the cgroups."""
        if self.stopped:
            return
        self.stopped = True
        if self.launcher.poll() is None:
            self.run("systemctl", "poweroff", "--no-block", check=False, timeout=30)
            try:
                self.launcher.wait(timeout)
            except subprocess.TimeoutExpired:
                _kill_launcher(self.launcher, self.pid)
        for sub in self.cgroups:
            _remove_cgroup(sub)

    def leftovers(self) -> list[str]:
        """What is still there of the machine: processes, cgroups, mounts on the host."""
        left: list[str] = []
        if self.launcher.poll() is None:
            left.append(f"launcher {self.launcher.pid} still running")
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if os.readlink(proc / "ns/pid") == self.pidns:
                    left.append(f"process {proc.name} in the machine's PID namespace")
            except OSError:
                continue
        left.extend(f"cgroup {sub}" for sub in self.cgroups if sub.exists())
        new = host_mount_targets() - self.host_mounts_before
        left.extend(f"mount {target}" for target in sorted(new) if _inside(target))
        return left

    # -- talking to it --------------------------------------------------------------------

    def run(
        self,
        *argv: str,
        check: bool = True,
        timeout: float = 120.0,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside the machine (all its namespaces), as root."""
        environ = {"PATH": SECURE_PATH, "HOME": "/root", "LANG": "C.UTF-8",
                   "SYSTEMD_PAGER": "", "SYSTEMD_COLORS": "0", "TERM": "dumb"}  # fmt: skip
        environ.update(env or {})
        done = subprocess.run(
            ["nsenter", "-t", str(self.pid), "-a", "--", *argv],
            capture_output=True, text=True, timeout=timeout, input=input, env=environ,
            check=False, stdin=None if input is not None else subprocess.DEVNULL,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise MachineError(
                f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            )
        return done

    def sh(self, script: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return self.run("/bin/bash", "-euo", "pipefail", "-c", script, **kw)

    def systemctl(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return self.run("systemctl", *args, **kw)

    def show(self, unit: str, *props: str) -> dict[str, str]:
        out = self.systemctl("show", unit, *(f"--property={p}" for p in props)).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def path(self, inside: str) -> Path:
        """A path inside the machine, as seen from the host."""
        return Path(f"/proc/{self.pid}/root") / inside.lstrip("/")

    def cursor(self) -> str:
        out = self.run("journalctl", "--show-cursor", "-n", "0", "--no-pager").stdout
        for line in out.splitlines():
            if line.startswith("-- cursor: "):
                return line.removeprefix("-- cursor: ")
        raise MachineError(f"no journal cursor in {out!r}")

    def journal(self, *match: str, after: str | None = None) -> list[dict[str, Any]]:
        """Journal entries (journalctl -o json), oldest first; `match` as journalctl takes
        it (``-u UNIT``, ``_PID=…``); `after` a cursor from `cursor`."""
        argv = ["journalctl", "-o", "json", "--no-pager", *match]
        if after:
            argv.append(f"--after-cursor={after}")
        done = self.run(*argv, check=False)
        entries = []
        for line in done.stdout.splitlines():
            entry = json.loads(line)
            message = entry.get("MESSAGE")
            if isinstance(message, list):  # journald stores non-UTF-8 text as bytes
                entry["MESSAGE"] = bytes(message).decode(errors="replace")
            entries.append(entry)
        return entries


def events(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON log lines among journal entries (jupcron's own), as dicts."""
    out = []
    for entry in entries:
        message = entry.get("MESSAGE")
        if not isinstance(message, str) or not message.startswith("{"):
            continue
        try:
            data = json.loads(message)
        except ValueError:
            continue
        if isinstance(data, dict) and "event" in data:
            data["_pid"] = entry.get("_PID")
            out.append(data)
    return out


def host_mount_targets() -> set[str]:
    return {line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()}


def _inside(target: str) -> bool:
    return any(target == top or target.startswith(top + "/") for top in MOUNTED_INSIDE)


def _kill_launcher(launcher: subprocess.Popen[bytes], pid1: int | None = None) -> None:
    for pid in (pid1, launcher.pid):
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    try:
        launcher.wait(30)
    except subprocess.TimeoutExpired as exc:  # pragma: no cover - the kernel reaps it
        raise MachineError(f"launcher {launcher.pid} does not die") from exc

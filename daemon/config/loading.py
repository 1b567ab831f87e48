"""Finding and reading the config file: relative paths made absolute against the
file's folder, every problem as ``file:line:col: message``."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from jupcron.config.sections import Config, DatabaseConfig
from jupcron.config.trust import check_file
from jupcron.config.yamlfile import decode, load, problems_from, read_checked
from jupcron.errors import ConfigError, YamlLoadError

DEFAULT_PATH = Path("/etc/jupcron/jupcron.yaml")


def config_path(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    """The file to read: `explicit` (``--config``), else ``$JUPCRON_CONFIG``, else
    `DEFAULT_PATH`. An empty `explicit` is refused, never read as "none given": it is
    a script's ``--config "$CFG"`` with CFG unset, and the fallback is another config
    (another database and wallet) than the one the script meant."""
    if explicit is not None:
        if not os.fspath(explicit):
            raise ConfigError(
                '--config is empty (an unset variable in --config "$VAR"?): give the '
                "config file's path, or leave --config out for $JUPCRON_CONFIG or "
                f"{DEFAULT_PATH}"
            )
        return Path(explicit)
    if env.get("JUPCRON_CONFIG"):
        return Path(env["JUPCRON_CONFIG"])
    return DEFAULT_PATH


def _resolve(base: Path, value: Any) -> Any:
    if isinstance(value, str) and value and not value.startswith("/"):
        return _real(base / value)
    return value


def _real(path: Path) -> str:
    """`path` with its symlinks resolved as far as they go: a loop (``a -> b -> a``) is
    left for the file's read to name (`Path.resolve` raised `RuntimeError`, which no
    caller of `load_config` expects: the daemon's config watch ended the daemon)."""
    return os.path.realpath(path)


def _resolve_sqlite(base: Path, url: Any) -> Any:
    """A SQLite URL naming a relative file (``sqlite:///jupcron.db``), made absolute
    against `base`; any other value as it is."""
    if not isinstance(url, str) or not url.startswith("sqlite"):
        return url
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # (a port that is not a number: ValueError)
        return url  # reported when the section is checked
    database = parsed.database or ""
    if not database or database == ":memory:" or database.startswith(("/", "file:")):
        return url
    if NUL in database:  # no file's name (said by `load_config`; `realpath` raises)
        return url
    return parsed.set(database=_real(base / database)).render_as_string(hide_password=False)


_RELATIVE = (
    ("api", "key_file"),
    ("wallet", "keypair"),
    ("plans", "dir"),
    ("safety", "kill_switch_file"),
    ("web", "token_file"),
)


HOME_PATH = (
    "a path beginning with '~' is not expanded (it would name a '~' folder beside "
    "this file, and the daemon's user has another home than yours): give an absolute path"
)


NUL = "\x00"
NUL_PATH = (
    "holds a NUL character (\\0), which no file's path can: remove it (every use of "
    "the path raised an error no caller expects)"
)


def _path_problems(data: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """Where the file gives a path from a home folder (``~/…``), as a shell would read
    it: made relative to the config's folder it is quietly another file, and a kill
    switch file touched at ``~/…`` would never stop a run; or a path with a NUL
    character (YAML's ``"\\0"``), which no file has. Each with what is wrong."""
    found: list[tuple[tuple[str, ...], str]] = []
    for section, key in _RELATIVE:
        part = data.get(section)
        problem = _path_problem(part.get(key)) if isinstance(part, dict) else None
        if problem is None and (section, key) != ("plans", "dir"):  # said by its own check
            problem = _empty_path(part.get(key)) if isinstance(part, dict) else None
        if problem is not None:
            found.append(((section, key), problem))
    wallets = data.get("wallets")
    if isinstance(wallets, dict):
        for name, entry in wallets.items():
            keypair = entry.get("keypair") if isinstance(entry, dict) else None
            problem = _path_problem(keypair) or _empty_path(keypair)
            if problem is not None:
                found.append((("wallets", str(name), "keypair"), problem))
    database = data.get("database")
    url = database.get("url") if isinstance(database, dict) else None
    if isinstance(url, str) and url.startswith("sqlite"):
        problem = _path_problem(_sqlite_path(url))
        if problem is not None:
            found.append((("database", "url"), problem))
    return found


def _path_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    if value.startswith("~"):  # ~/x, and ~user/x
        return HOME_PATH
    return NUL_PATH if NUL in value else None


EMPTY_PATH = (
    "is empty: give the file's path, or leave the key out (an empty path is the "
    "config's own folder: a kill switch file that always exists, a keypair that is a folder)"
)


def _empty_path(value: Any) -> str | None:
    """Why a file's path given as ``""`` (or blanks) is refused: made relative to the
    config's folder it named that folder, which always exists, so
    ``safety.kill_switch_file: ""`` kept the kill switch on for good."""
    return EMPTY_PATH if isinstance(value, str) and not value.strip() else None


def _sqlite_path(url: str) -> str | None:
    try:
        return make_url(url).database
    except (ArgumentError, ValueError):
        return None  # reported when the section is checked


def load_config(
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Read and validate the config file; every problem as ``file:line:col: message``.
    A file that a user other than jupcron's or root could have changed is refused
    (`jupcron.config.trust`): it sets dry run and the guard's limits."""
    env = os.environ if env is None else env
    path = config_path(explicit, env)
    try:
        raw = read_checked(path, check_file)
        data, locator = load(path, decode(path, raw))
    except YamlLoadError as exc:
        hint = ""
        if not path.exists() and explicit is None:
            hint = " (give --config PATH or set JUPCRON_CONFIG)"
        raise ConfigError(f"{exc.problem}{hint}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(str(locator.problem((), "the config must be a mapping of sections")))
    paths = [str(locator.problem(loc, f"{'.'.join(map(str, loc))}: {problem}"))
             for loc, problem in _path_problems(data)]  # fmt: skip
    if paths:
        raise ConfigError("\n".join(paths))
    base = path.resolve().parent
    for section, key in _RELATIVE:
        part = data.get(section)
        if isinstance(part, dict) and key in part:
            part[key] = _resolve(base, part[key])
    wallets = data.get("wallets")
    if isinstance(wallets, dict):
        for entry in wallets.values():
            if isinstance(entry, dict) and "keypair" in entry:
                entry["keypair"] = _resolve(base, entry["keypair"])
    database = data.get("database")
    if isinstance(database, dict) and "url" in database:
        database["url"] = _resolve_sqlite(base, database["url"])
    for own in ("source", "digest"):  # set here, never by the file
        if own in data:
            raise ConfigError(str(locator.problem((own,), f"unknown key '{own}'")))
    data["source"] = str(path)
    data["digest"] = config_digest(raw)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = problems_from(exc, locator, Config)
        raise ConfigError("\n".join(str(p) for p in problems)) from None


def load_database_config(
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Config, ConfigError | None]:
    """The config, or, when it does not load, one holding only its ``database`` section
    (the rest at defaults) and the error that kept the whole from loading: what the
    emergency stop (`jupcron pause`) needs, so a typo elsewhere never blocks it. The
    error is raised when even the database section cannot be read, and when another
    user may change the file (`check_file`): its database section may then name any
    database, and a pause written there stops nothing the daemon runs."""
    try:
        return load_config(explicit, env), None
    except ConfigError as whole:
        env = os.environ if env is None else env
        path = config_path(explicit, env)
        try:
            raw = read_checked(path, check_file)
            data, _ = load(path, decode(path, raw))
        except YamlLoadError:
            raise whole from None
        section = data.get("database", {}) if isinstance(data, dict) else None
        if not isinstance(section, dict):
            raise whole from None
        section = dict(section)
        if "url" in section:
            section["url"] = _resolve_sqlite(path.resolve().parent, section["url"])
        try:
            database = DatabaseConfig.model_validate(section)
        except ValidationError:
            raise whole from None
        digest = config_digest(raw)
        return Config(database=database, source=str(path), digest=digest), whole


def config_digest(raw: bytes) -> str:
    """A short fingerprint of a config file's bytes (what runs record they ran under)."""
    return hashlib.sha256(raw).hexdigest()[:12]

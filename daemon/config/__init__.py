"""The daemon configuration: one YAML file, validated with pydantic.

Where it comes from: ``--config PATH``, else ``$JUPCRON_CONFIG``, else
``/etc/jupcron/jupcron.yaml``. Relative paths inside it are relative to the
file's own folder. Secrets (the API key) are never held in a field that
prints: they are read on demand by `api_key`, and wrapped in `SecretStr`.
URLs that may carry a secret (``rpc.url?api-key=…``, a webhook token, a
database password) keep their real value for the code that connects, but
``repr()``, ``str()``, ``model_dump()`` and ``model_dump_json()`` show them
through `mask_url`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from solders.pubkey import Pubkey
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from jupcron.config.yamlfile import decode, load, problems_from, read_checked
from jupcron.errors import ConfigError, YamlLoadError
from jupcron.private import read_private
from jupcron.scheduling.schedule import parse_duration
from jupcron.urls import check_http_url
from jupcron.urls import mask_url as mask_url  # where it lived before jupcron.urls

DEFAULT_PATH = Path("/etc/jupcron/jupcron.yaml")
LEGACY_HOSTS = ("lite-api.jup.ag",)

# DESIGN §4 / API.md: the programs a Jupiter transaction may call.
DEFAULT_PROGRAMS: dict[str, str] = {
    "DCA265Vj8a9CEuX1eb1LWRnDT7uK6q1xMipnNyatn23M": "Jupiter DCA (Recurring)",
    "VALaaymxQh2mNy2trH9jUqHT1mTow76wpTcGmSWSwJe": "Jupiter Value Average (Recurring, price)",
    "j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X": "Jupiter Limit Order v2 (Trigger)",
    "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4": "Jupiter Aggregator v6",
    "61DFfeTKM7trxYcPQCM78bJ794ddZprZpAwAnLiwTpYH": "Jupiter Order Engine (JupiterZ RFQ)",
    "ComputeBudget111111111111111111111111111111": "Compute Budget",
    "11111111111111111111111111111111": "System",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA": "SPL Token",
    "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb": "Token-2022",
    "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL": "Associated Token Account",
    "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr": "Memo",
}

PositiveFloat = Annotated[float, Field(gt=0)]
# the APIs that can serve `kind: swap` (docs/products.md)
SwapApi = Literal["swap-v2", "ultra-v1"]


def _shown(value: str | None) -> str | None:
    return None if value is None else mask_url(value)


class _Masked:
    """Marks a field whose value is shown through `mask_url` (repr, str, dumps)."""


MASKED = _Masked()
MaskedUrl = Annotated[str, PlainSerializer(_shown), MASKED]
OptionalMaskedUrl = Annotated[str | None, PlainSerializer(_shown), MASKED]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        fields = type(self).model_fields
        for name, value in super().__repr_args__():
            info = fields.get(name) if name else None
            if info is not None and MASKED in info.metadata and isinstance(value, str):
                value = mask_url(value)
            yield name, value


def _http_url(value: str, info: ValidationInfo, section: str, carries: str) -> str:
    """Validator body for a URL field that follows an ``allow_insecure_http`` field
    (declared first, so its value is known here)."""
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    allow = bool(info.data.get("allow_insecure_http", False))
    return check_http_url(value, section=section, carries=carries, allow_insecure=allow)


class ApiPaths(_Section):
    """Path prefix of each product (``swap``: Swap V2, ``ultra``: Ultra v1)."""

    recurring: str = "/recurring/v1"
    trigger: str = "/trigger/v1"
    ultra: str = "/ultra/v1"
    swap: str = "/swap/v2"
    portfolio: str = "/portfolio/v1"
    tokens: str = "/tokens/v2"

    @field_validator("recurring", "trigger", "ultra", "swap", "portfolio", "tokens")
    @classmethod
    def _slash(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with '/'")
        return value.rstrip("/")


Router = Literal["metis", "jupiterz", "dflow", "okx"]
THIRD_PARTY_ROUTERS: tuple[Router, ...] = ("dflow", "okx")


class ApiConfig(_Section):
    # plain http:// to a host other than this machine: refused unless true
    allow_insecure_http: bool = False
    base_url: MaskedUrl = "https://api.jup.ag"
    key_file: Path | None = None
    paths: ApiPaths = ApiPaths()
    connect_timeout: PositiveFloat = 5.0
    read_timeout: PositiveFloat = 20.0
    # requests per second we allow ourselves; None = by key (keyless 0.5, else 1)
    rate_limit: PositiveFloat | None = None
    # which API serves `kind: swap` (a plan's own `swap_api` wins): Swap V2, or Ultra v1
    # (no longer actively maintained upstream; kept for who is not ready to move)
    swap_api: SwapApi = "swap-v2"
    # routers every swap order excludes (`excludeRouters`, joined with a plan's own): the
    # third-party routers' transactions call programs whose interfaces txguard cannot
    # hold to the plan, so it would refuse them (docs/products.md)
    exclude_routers: list[Router] = Field(default_factory=lambda: list(THIRD_PARTY_ROUTERS))
    # Swap V2's execute has its own rate bucket; None = by key (keyless 20, else 50)
    execute_rate_limit: PositiveFloat | None = None
    max_attempts: Annotated[int, Field(ge=1, le=10)] = 4

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str, info: ValidationInfo) -> str:
        carries = "the API key and the signed transactions"
        return _http_url(value, info, "api", carries).rstrip("/")


class WalletConfig(_Section):
    keypair: Path | None = None


class DatabaseConfig(_Section):
    url: MaskedUrl = "sqlite:////var/lib/jupcron/jupcron.db"

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("sqlite:", "postgresql")):
            raise ValueError("must be a sqlite:/// or postgresql+psycopg:// URL")
        return value


class PlansConfig(_Section):
    dir: Path = Path("/etc/jupcron/plans")


class GuardConfig(_Section):
    allowed_programs: list[str] = Field(default_factory=lambda: list(DEFAULT_PROGRAMS))
    extra_programs: list[str] = Field(default_factory=list)
    max_priority_fee_lamports: Annotated[int, Field(ge=0)] = 10_000_000  # 0.01 SOL
    # the whole fee (5,000 lamports a signature plus the priority fee), as the runtime
    # computes it; applies when our wallet pays it
    max_fee_lamports: Annotated[int, Field(ge=0)] = 10_000_000  # 0.01 SOL
    allow_gasless: bool = False
    # with rpc.url set: simulate every transaction before signing and refuse any loss
    # beyond the order (see docs/txguard.md); off only to save RPC calls, never for safety
    simulate: bool = True
    # what a recurring order's escrow accounts may cost in rent (returned on close)
    order_rent_allowance_lamports: Annotated[int, Field(ge=0, le=100_000_000)] = 10_000_000
    # how far a Jupiter instruction's input may exceed the plan's amount (basis points);
    # Jupiter's own fees come out of the plan's amount, so 0 is right for its APIs
    amount_allowance_bps: Annotated[int, Field(ge=0, le=100)] = 0
    # a swap plan without its own slippageBps: the most slippage a route may allow
    max_slippage_bps: Annotated[int, Field(ge=0, le=5_000)] = 300
    # the most platform fee a route may take when the plan names no referral: Jupiter's
    # own fee is 0-10 bps on listed pairs (50 on tokens younger than a day)
    max_platform_fee_bps: Annotated[int, Field(ge=0, le=255)] = 20
    # with rpc.url and an oracle feed for both mints: refuse a transaction whose guaranteed
    # minimum out is more than this many bps below what the reference price implies
    # (docs/price-protection.md)
    max_price_deviation_bps: Annotated[int, Field(ge=0, le=10_000)] = 300


class PriceConfig(_Section):
    """The reference price (docs/price-protection.md): Pyth price feed accounts read
    through ``rpc.url``."""

    # mint -> Pyth price feed account (PriceUpdateV2) of its USD price; added to (or
    # replacing) the built-in feeds of SOL, USDC, USDT and JUP (daemon/price/oracle.py)
    feeds: dict[str, str] = Field(default_factory=dict)
    # a reference older than this (seconds since its publish time) is stale; Pyth's
    # sponsored feeds on Solana update at least every 60 s
    max_age: Annotated[float, Field(gt=0, le=86_400)] = 120.0
    # a feed configured for a mint but stale, missing or unreadable: refuse to sign, or
    # sign without the reference check and record a warning event
    on_stale: Literal["refuse", "warn"] = "refuse"

    @field_validator("feeds")
    @classmethod
    def _keys(cls, value: dict[str, str]) -> dict[str, str]:
        for mint, account in value.items():
            for what, key in (("mint", mint), ("feed account", account)):
                try:
                    Pubkey.from_string(key)
                except ValueError:
                    raise ValueError(f"{what} '{key}' is not a base58 public key") from None
        return value


class CapConfig(_Section):
    mint: str
    per_day: Annotated[int, Field(gt=0)] | None = None
    per_week: Annotated[int, Field(gt=0)] | None = None


class SafetyConfig(_Section):
    dry_run: bool = False
    kill_switch_file: Path | None = None
    kill_switch: bool = False
    caps: list[CapConfig] = Field(default_factory=list)
    balance_check: bool = False


class RpcConfig(_Section):
    allow_insecure_http: bool = False
    url: OptionalMaskedUrl = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        return _http_url(value, info, "rpc", "the URL's key and our transactions")


class RunnerConfig(_Section):
    # how long a blockhash is taken to stay valid after the order call (seconds)
    blockhash_validity: PositiveFloat = 90.0
    # ignored: a plan's `schedule.grace` (default 300 s) is what counts; the key is
    # still read so a config that sets it loads, and the daemon says it is ignored
    default_grace: PositiveFloat | None = None
    shutdown_timeout: PositiveFloat = 20.0
    recovery_interval: PositiveFloat = 30.0
    workers: Annotated[int, Field(ge=1, le=256)] = 8
    # the workers' writes of one moment share a transaction (daemon/store/group.py)
    group_commit: bool = True


class FollowConfig(_Section):
    """The order follower: fills of recurring orders, the fate of trigger orders."""

    enabled: bool = True
    interval: Annotated[float, Field(ge=1)] = 300.0  # seconds between polls
    # part of api.rate_limit the follower may use, and only when no run is waiting
    share: Annotated[float, Field(gt=0, le=1)] = 0.25


class MetricsConfig(_Section):
    listen: str | None = None  # e.g. 127.0.0.1:9464


class WebConfig(_Section):
    """The read-only status page (daemon/web): off unless `listen` is set."""

    listen: str | None = None  # e.g. 127.0.0.1:8080; another address needs token_file
    token_file: Path | None = None  # a bearer token (mode 0600) the page and its API ask for
    refresh: Annotated[float, Field(ge=1, le=3600)] = 5.0  # seconds between page updates
    # the session cookie's `Secure`: auto = when the request came through an https proxy
    # (X-Forwarded-Proto / Forwarded: proto=https); true = always; false = never
    secure_cookie: Literal["auto"] | bool = "auto"
    # seconds a sign-in lasts (the cookie's Max-Age, and the server forgets it then)
    session_max_age: Annotated[float, Field(ge=60, le=30 * 86_400)] = 43_200.0


# what `notify.events` may name (daemon/service/alerts.py: AlertEvent)
NOTIFY_EVENTS = (
    "failed", "rejected", "in_doubt", "skipped", "misfire", "manual_fire", "daemon_start",
    "daemon_stop", "daemon_fatal", "leader_change", "low_balance",
)  # fmt: skip


class NotifyConfig(_Section):
    """Alerts (docs/notify.md): Apprise URLs, and the older JSON webhook."""

    allow_insecure_http: bool = False
    webhook_url: OptionalMaskedUrl = None
    # Apprise URLs (tgram://, mailto://, slack://, ntfy://, json://…): secrets, shown masked
    urls: list[SecretStr] = Field(default_factory=list)
    # which events are said (empty: all of NOTIFY_EVENTS)
    events: list[str] = Field(default_factory=list)
    batch: Annotated[float, Field(ge=0, le=3600)] = 10.0  # seconds a burst is gathered
    min_interval: Annotated[float, Field(ge=0, le=86_400)] = 60.0  # between two messages
    skip_summary: Annotated[float, Field(ge=0)] = 3600.0  # seconds between skip summaries

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[str]) -> list[str]:
        unknown = [e for e in value if e not in NOTIFY_EVENTS]
        if unknown:
            raise ValueError(f"unknown event(s) {unknown}; known: {', '.join(NOTIFY_EVENTS)}")
        return value

    @field_validator("urls")
    @classmethod
    def _schemes(cls, value: list[SecretStr]) -> list[SecretStr]:
        for index, url in enumerate(value):
            if "://" not in url.get_secret_value():
                raise ValueError(f"urls[{index}] is not a URL (scheme://…)")
        return value

    @field_validator("webhook_url")
    @classmethod
    def _url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        return _http_url(value, info, "notify", "the webhook's token and the runs' details")


class RunwayConfig(_Section):
    """The runway of the wallet's balance (docs/notify.md): how many upcoming runs it
    covers per input mint, read by the leader every `refresh` seconds (the portfolio
    API, on spare capacity), shown in `jupcron status`, the page and /metrics."""

    enabled: bool = True
    # a low_balance alert when fewer upcoming runs than this are covered (0: never)
    alert_below: Annotated[int, Field(ge=0, le=1000)] = 3
    refresh: Annotated[float, Field(ge=1, le=86_400)] = 300.0  # seconds between two reads
    horizon: int = 30 * 86_400  # how far ahead runs are counted (30d, 1w, or seconds)

    @field_validator("horizon", mode="before")
    @classmethod
    def _horizon(cls, value: Any) -> int:
        seconds = parse_duration(value, what="horizon")
        if seconds < 3600:
            raise ValueError("horizon must be at least 1h")
        return seconds


class LoggingConfig(_Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "json", "console"] = "auto"


class Config(_Section):
    api: ApiConfig = ApiConfig()
    wallet: WalletConfig = WalletConfig()
    database: DatabaseConfig = DatabaseConfig()
    plans: PlansConfig = PlansConfig()
    guard: GuardConfig = GuardConfig()
    safety: SafetyConfig = SafetyConfig()
    rpc: RpcConfig = RpcConfig()
    price: PriceConfig = PriceConfig()
    runner: RunnerConfig = RunnerConfig()
    follow: FollowConfig = FollowConfig()
    metrics: MetricsConfig = MetricsConfig()
    web: WebConfig = WebConfig()
    notify: NotifyConfig = NotifyConfig()
    runway: RunwayConfig = RunwayConfig()
    logging: LoggingConfig = LoggingConfig()
    # where the file was read from ('' = built in defaults)
    source: str = ""
    # which content: `config_digest` of the file's bytes ('' = built in defaults); runs
    # record it, and a daemon compares it to notice a changed file
    digest: str = ""

    @property
    def programs(self) -> set[str]:
        return set(self.guard.allowed_programs) | set(self.guard.extra_programs)


def config_path(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    if explicit:
        return Path(explicit)
    if env.get("JUPCRON_CONFIG"):
        return Path(env["JUPCRON_CONFIG"])
    return DEFAULT_PATH


def _resolve(base: Path, value: Any) -> Any:
    if isinstance(value, str) and value and not value.startswith("/"):
        return str((base / value).resolve())
    return value


def _resolve_sqlite(base: Path, url: Any) -> Any:
    """A SQLite URL naming a relative file (``sqlite:///jupcron.db``), made absolute
    against `base`; any other value as it is."""
    if not isinstance(url, str) or not url.startswith("sqlite"):
        return url
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url  # reported when the engine is made
    database = parsed.database or ""
    if not database or database == ":memory:" or database.startswith(("/", "file:")):
        return url
    return parsed.set(database=str((base / database).resolve())).render_as_string(
        hide_password=False
    )


_RELATIVE = (
    ("api", "key_file"),
    ("wallet", "keypair"),
    ("plans", "dir"),
    ("safety", "kill_switch_file"),
    ("web", "token_file"),
)


def load_config(
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Read and validate the config file; every problem as ``file:line:col: message``."""
    env = os.environ if env is None else env
    path = config_path(explicit, env)
    try:
        raw = read_checked(path)
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
    base = path.resolve().parent
    for section, key in _RELATIVE:
        part = data.get(section)
        if isinstance(part, dict) and key in part:
            part[key] = _resolve(base, part[key])
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
    error is raised when even the database section cannot be read."""
    try:
        return load_config(explicit, env), None
    except ConfigError as whole:
        env = os.environ if env is None else env
        path = config_path(explicit, env)
        try:
            raw = read_checked(path)
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


def api_key(config: Config, env: Mapping[str, str] | None = None) -> SecretStr | None:
    """The API key: ``$JUPITER_API_KEY``, else ``api.key_file``, else the systemd
    credential ``api-key``; ``None`` means keyless (paced at 0.5 requests/s).

    The file is checked like the keypair (`jupcron.private.read_private`: owner,
    mode, a regular file); surrounding whitespace (the trailing newline) is
    dropped, and a key an HTTP header cannot carry is refused here, not on the
    first request. An empty ``api.key_file`` is an error (a key was meant); an
    empty credential is keyless: the shipped units give ``SetCredential=api-key:``
    as the default when the install wrote no key file (systemd/README.md)."""
    env = os.environ if env is None else env
    if env.get("JUPITER_API_KEY"):
        return SecretStr(_header_safe(env["JUPITER_API_KEY"].strip(), "$JUPITER_API_KEY"))
    path = config.api.key_file
    credential = False
    if path is None and env.get("CREDENTIALS_DIRECTORY"):
        candidate = Path(env["CREDENTIALS_DIRECTORY"]) / "api-key"
        path = candidate if candidate.exists() else None
        credential = True
    if path is None:
        return None
    missing = "API key file not found (set api.key_file or JUPITER_API_KEY)"
    raw = read_private(path, "API key", ConfigError, env, missing=missing)
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: cannot read the API key file: not UTF-8 text") from None
    if not text:
        if credential:
            return None
        raise ConfigError(f"{path}: the API key file is empty")
    return SecretStr(_header_safe(text, str(path)))


def _header_safe(key: str, source: str) -> str:
    """``key`` if an HTTP header can carry it (visible ASCII and inner spaces);
    the error names the position and the kind of character, never the key."""
    for position, char in enumerate(key, start=1):
        if " " <= char <= "~":
            continue
        kind = "a non-ASCII character" if ord(char) > 0x7F else "a control character"
        if char in "\r\n":
            kind = "a line break"
        raise ConfigError(
            f"{source}: the API key holds {kind} (character {position}), which an HTTP "
            "header cannot carry; the key must be one line of visible ASCII"
        )
    return key

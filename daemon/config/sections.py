"""The config's sections and the whole `Config` (pydantic, frozen, extra keys refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from sqlalchemy.engine import make_url

from jupcron.config.fields import (
    LONGEST,
    MaskedUrl,
    OptionalMaskedUrl,
    PositiveFloat,
    Section,
    SwapApi,
    http_url_validator,
)
from jupcron.config.signing import GuardConfig, PriceConfig, SafetyConfig
from jupcron.config.wallets import (
    NamedWalletConfig,
    WalletConfig,
    check_wallets,
    has_default,
    known_wallets,
    unknown_wallet,
    wallet_entries,
)
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import ConfigError
from jupcron.scheduling.schedule import parse_duration
from jupcron.urls import url_problem

LEGACY_HOSTS = ("lite-api.jup.ag",)


class ApiPaths(Section):
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


class ApiConfig(Section):
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

    _url = http_url_validator(
        "base_url", "api", "the API key and the signed transactions", strip=True
    )


class DatabaseConfig(Section):
    url: MaskedUrl = "sqlite:////var/lib/jupcron/jupcron.db"

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("sqlite:", "postgresql")):
            raise ValueError("must be a sqlite:/// or postgresql+psycopg:// URL")
        problem = url_problem(value) or _store_problem(value)  # as SQLAlchemy reads it
        if problem is not None:
            raise ValueError(problem)
        return value


def _store_problem(url: str) -> str | None:
    """What keeps a well-formed database URL from being a store: a database in memory
    (gone when the command ends: nothing `db upgrade` migrates would stay), or a
    PostgreSQL driver other than psycopg 3."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:") or parsed.query.get("mode") == "memory":
            return (
                "names no database file: a database in memory is gone when the command "
                "ends; give a file (sqlite:////var/lib/jupcron/jupcron.db)"
            )
    elif parsed.drivername not in ("postgresql", "postgresql+psycopg"):
        return (
            f"names the driver {parsed.drivername}: jupcron speaks to PostgreSQL through "
            "psycopg 3: write postgresql+psycopg:// (or postgresql://)"
        )
    return None


class PlansConfig(Section):
    dir: Path = Path("/etc/jupcron/plans")

    @field_validator("dir", mode="before")
    @classmethod
    def _dir(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():  # would be the current folder
            raise ValueError("is empty: give the folder of the plan files")
        return value


class RpcConfig(Section):
    allow_insecure_http: bool = False
    url: OptionalMaskedUrl = None

    _url = http_url_validator("url", "rpc", "the URL's key and our transactions")


class RunnerConfig(Section):
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


class FollowConfig(Section):
    """The order follower: fills of recurring orders, the fate of trigger orders."""

    enabled: bool = True
    interval: Annotated[float, Field(ge=1, le=LONGEST)] = 300.0  # seconds between polls
    # part of api.rate_limit the follower may use, and only when no run is waiting
    share: Annotated[float, Field(gt=0, le=1)] = 0.25


def _listen_given(cls: type[Section], value: object) -> object:
    """An empty listen is not "off" (that is leaving it out): the daemon read it as
    unset and served nothing, without a word."""
    if isinstance(value, str) and not value.strip():
        raise ValueError("is empty: give HOST:PORT (e.g. 127.0.0.1:9464), or leave the key out")
    return value


class MetricsConfig(Section):
    listen: str | None = None  # e.g. 127.0.0.1:9464

    _listen = field_validator("listen", mode="before")(classmethod(_listen_given))


class WebConfig(Section):
    """The read-only status page (daemon/web): off unless `listen` is set."""

    listen: str | None = None  # e.g. 127.0.0.1:8080; another address needs token_file
    token_file: Path | None = None  # a bearer token (mode 0600) the page and its API ask for
    refresh: Annotated[float, Field(ge=1, le=3600)] = 5.0  # seconds between page updates
    # the session cookie's `Secure`: auto = when the request came through an https proxy
    # (X-Forwarded-Proto / Forwarded: proto=https); true = always; false = never
    secure_cookie: Literal["auto"] | bool = "auto"
    # seconds a sign-in lasts (the cookie's Max-Age, and the server forgets it then)
    session_max_age: Annotated[float, Field(ge=60, le=30 * 86_400)] = 43_200.0

    _listen = field_validator("listen", mode="before")(classmethod(_listen_given))


# what `notify.events` may name (daemon/service/alerts.py: AlertEvent)
NOTIFY_EVENTS = (
    "failed", "rejected", "in_doubt", "skipped", "misfire", "manual_fire", "daemon_start",
    "daemon_stop", "daemon_fatal", "leader_change", "low_balance", "store_down",
    "dependency_down", "order_held", "order_overdue", "order_unaccounted",
)  # fmt: skip


class NotifyConfig(Section):
    """Alerts (docs/notify.md): Apprise URLs, and the older JSON webhook."""

    allow_insecure_http: bool = False
    webhook_url: OptionalMaskedUrl = None
    # Apprise URLs (tgram://, mailto://, slack://, ntfy://, json://…): secrets, shown masked
    urls: list[SecretStr] = Field(default_factory=list)
    # which events are said (empty: all of NOTIFY_EVENTS)
    events: list[str] = Field(default_factory=list)
    batch: Annotated[float, Field(ge=0, le=3600)] = 10.0  # seconds a burst is gathered
    min_interval: Annotated[float, Field(ge=0, le=86_400)] = 60.0  # between two messages
    skip_summary: Annotated[float, Field(ge=0, le=LONGEST)] = 3600.0  # between skip summaries
    # seconds the database may not answer before `store_down` is said (a blip is not)
    store_down_after: Annotated[float, Field(ge=1, le=3600)] = 30.0

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

    _url = http_url_validator("webhook_url", "notify", "the webhook's token and the runs' details")


class RunwayConfig(Section):
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


class LoggingConfig(Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "json", "console"] = "auto"


class Config(Section):
    api: ApiConfig = ApiConfig()
    wallet: WalletConfig = WalletConfig()
    # more wallets by name (docs/wallets.md); `default` is wallet.keypair's own name
    wallets: dict[str, NamedWalletConfig] = Field(default_factory=dict)
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

    @field_validator("wallets", mode="before")
    @classmethod
    def _entries(cls, value: Any) -> Any:
        return wallet_entries(value)

    @field_validator("wallets")
    @classmethod
    def _wallets(
        cls, value: dict[str, NamedWalletConfig], info: ValidationInfo
    ) -> dict[str, NamedWalletConfig]:
        return check_wallets(value, info.data.get("wallet"))

    @field_validator("safety")
    @classmethod
    def _cap_wallets(cls, value: SafetyConfig, info: ValidationInfo) -> SafetyConfig:
        default, named = info.data.get("wallet"), info.data.get("wallets")
        if not isinstance(default, WalletConfig) or not isinstance(named, dict):
            return value  # reported on those sections
        known = known_wallets(default, named)
        for index, cap in enumerate(value.caps):
            if cap.wallet is not None and cap.wallet not in known:
                raise ValueError(f"caps[{index}].wallet: {unknown_wallet(cap.wallet, known)}")
        return value

    @property
    def programs(self) -> set[str]:
        return set(self.guard.allowed_programs) | set(self.guard.extra_programs)

    @property
    def has_default_wallet(self) -> bool:
        """Whether there is a wallet named ``default`` (`jupcron.config.wallets`)."""
        return has_default(self.wallet, self.wallets)

    def wallet_names(self) -> tuple[str, ...]:
        """Every configured wallet's name: ``default`` first (when there is one), then
        the ``wallets:`` in name order."""
        return known_wallets(self.wallet, self.wallets)

    def wallet_keypair(self, name: str) -> Path | None:
        """The keypair file of wallet `name`; ``None`` for the default wallet read from
        the systemd credential (`jupcron.chain.wallet.keypair_path`). `ConfigError`
        when the config has no wallet of that name."""
        if name == DEFAULT_WALLET and self.has_default_wallet:
            return self.wallet.keypair
        entry = self.wallets.get(name)
        if entry is None:
            raise ConfigError(unknown_wallet(name, self.wallet_names()))
        return entry.keypair

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

from jupcron.config.apikey import api_key
from jupcron.config.fields import (
    MASKED,
    MaskedUrl,
    OptionalMaskedUrl,
    PositiveFloat,
    SwapApi,
)
from jupcron.config.loading import (
    DEFAULT_PATH,
    config_digest,
    config_path,
    load_config,
    load_database_config,
)
from jupcron.config.sections import (
    LEGACY_HOSTS,
    NOTIFY_EVENTS,
    THIRD_PARTY_ROUTERS,
    ApiConfig,
    ApiPaths,
    Config,
    DatabaseConfig,
    FollowConfig,
    LoggingConfig,
    MetricsConfig,
    NotifyConfig,
    PlansConfig,
    Router,
    RpcConfig,
    RunnerConfig,
    RunwayConfig,
    WebConfig,
)
from jupcron.config.signing import (
    DEFAULT_PROGRAMS,
    CapConfig,
    GuardConfig,
    PriceConfig,
    SafetyConfig,
)
from jupcron.config.wallets import (
    NamedWalletConfig,
    WalletConfig,
    unknown_wallet,
)
from jupcron.urls import mask_url as mask_url  # where it lived before jupcron.urls

__all__ = [
    "DEFAULT_PATH",
    "DEFAULT_PROGRAMS",
    "LEGACY_HOSTS",
    "MASKED",
    "NOTIFY_EVENTS",
    "THIRD_PARTY_ROUTERS",
    "ApiConfig",
    "ApiPaths",
    "CapConfig",
    "Config",
    "DatabaseConfig",
    "FollowConfig",
    "GuardConfig",
    "LoggingConfig",
    "MaskedUrl",
    "MetricsConfig",
    "NamedWalletConfig",
    "NotifyConfig",
    "OptionalMaskedUrl",
    "PlansConfig",
    "PositiveFloat",
    "PriceConfig",
    "Router",
    "RpcConfig",
    "RunnerConfig",
    "RunwayConfig",
    "SafetyConfig",
    "SwapApi",
    "WalletConfig",
    "WebConfig",
    "api_key",
    "config_digest",
    "config_path",
    "load_config",
    "load_database_config",
    "mask_url",
    "unknown_wallet",
]

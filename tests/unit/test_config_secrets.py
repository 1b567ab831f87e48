"""Secret-bearing URLs in the config: masked in every way the config is shown
(repr, str, model dumps, log lines), real where they are used; and plain
http:// to another machine refused unless the section allows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from jupcron.config import Config, load_config
from jupcron.errors import ConfigError
from jupcron.logs import mask_secrets
from jupcron.urls import is_loopback_host, mask_url

# (config section, key, a URL carrying a secret, the secret, how it is shown)
SECRET_URLS = [
    ("rpc", "url", "https://mainnet.helius-rpc.com/?api-key=RPC-SECRET-1",
     "RPC-SECRET-1", "https://mainnet.helius-rpc.com/?api-key=***"),
    ("rpc", "url", "https://solana-mainnet.g.alchemy.com/v2/ALCHEMYsecret2",
     "ALCHEMYsecret2", "https://solana-mainnet.g.alchemy.com/***"),
    ("rpc", "url", "https://red-x.solana-mainnet.quiknode.pro/qn0secret3/",
     "qn0secret3", "https://red-x.solana-mainnet.quiknode.pro/***"),
    ("rpc", "url", "https://rpcuser:RPCpass4@rpc.example.net:8899",
     "RPCpass4", "https://***@rpc.example.net:8899"),
    ("notify", "webhook_url", "https://hooks.slack.com/services/T01/B02/SlackSecret5",
     "SlackSecret5", "https://hooks.slack.com/***"),
    ("notify", "webhook_url", "https://discord.com/api/webhooks/1234/discordSecret6",
     "discordSecret6", "https://discord.com/***"),
    ("notify", "webhook_url", "https://hooks.example.com/in?token=hookSecret7&x=1",
     "hookSecret7", "https://hooks.example.com/***?token=***&x=***"),
    ("database", "url", "postgresql+psycopg://jupcron:dbSecret8@db.internal:5432/jupcron",
     "dbSecret8", "postgresql+psycopg://jupcron:***@db.internal:5432/jupcron"),
    ("database", "url", "postgresql+psycopg://jupcron:pa/ss:9@db/jupcron?sslmode=require",
     "pa/ss:9", "postgresql+psycopg://jupcron:***@db/jupcron?sslmode=require"),
    ("database", "url", "postgresql://jupcron@db/jupcron?password=dbSecret10",
     "dbSecret10", "postgresql://jupcron@db/jupcron?password=***"),
    ("api", "base_url", "https://proxyuser:apiSecret11@proxy.example.com/jup",
     "apiSecret11", "https://***@proxy.example.com/***"),
]  # fmt: skip


def load_data(tmp_path: Path, data: dict[str, object]) -> Config:
    path = tmp_path / "jupcron.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return load_config(path, env={})


def views(config: Config) -> list[str]:
    """Every way the config is shown: repr, str, and the model dumps."""
    out = [repr(config), str(config), json.dumps(config.model_dump(mode="json"))]
    out += [str(config.model_dump()), config.model_dump_json(), config.model_dump_json(indent=2)]
    for name in Config.model_fields:
        part = getattr(config, name)
        if hasattr(part, "model_dump"):
            out += [repr(part), str(part), str(part.model_dump()), part.model_dump_json()]
    return out


@pytest.mark.parametrize(
    ("section", "key", "url", "secret", "shown"),
    SECRET_URLS,
    ids=[f"{s}.{k}-{i}" for i, (s, k, *_) in enumerate(SECRET_URLS)],
)
def test_a_secret_in_a_url_is_masked_everywhere_the_config_is_shown(
    tmp_path: Path, section: str, key: str, url: str, secret: str, shown: str
) -> None:
    config = load_data(tmp_path, {section: {key: url}})
    for text in views(config):
        assert secret not in text, text
    assert shown in config.model_dump_json()
    assert shown in repr(config)
    assert mask_url(url) == shown
    real = getattr(getattr(config, section), key)  # the real value, for use
    assert real == (url.rstrip("/") if key == "base_url" else url)


def test_a_log_line_of_those_urls_shows_no_secret() -> None:
    config = Config.model_validate(
        {
            "rpc": {"url": "https://rpc.example.net/?api-key=RPC-SECRET-1"},
            "database": {"url": "postgresql+psycopg://jupcron:dbSecret8@db/jupcron"},
        }
    )
    with capture_logs(processors=[mask_secrets]) as logs:
        log = structlog.get_logger("jupcron.test")
        log.info("config_seen", config=config.model_dump(), rpc=f"calling {config.rpc.url}")
        log.info("url_seen", url=config.database.url)
    text = repr(logs)
    assert "RPC-SECRET-1" not in text
    assert "dbSecret8" not in text
    assert "api-key=***" in text


def test_urls_without_secrets_are_shown_as_they_are() -> None:
    assert mask_url("https://api.jup.ag") == "https://api.jup.ag"
    assert mask_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/"
    assert (
        mask_url("sqlite:////var/lib/jupcron/jupcron.db") == "sqlite:////var/lib/jupcron/jupcron.db"
    )
    assert mask_url("postgresql+psycopg://jupcron@db/jupcron") == (
        "postgresql+psycopg://jupcron@db/jupcron"
    )
    assert mask_url("https://x.example/#frag") == "https://x.example/#***"
    assert mask_url("not a url") == "not a url"


# (section, key, what the message says travels in clear)
HTTP_KEYS = [
    ("api", "base_url", "the API key and the signed transactions"),
    ("rpc", "url", "the URL's key and our transactions"),
    ("notify", "webhook_url", "the webhook's token and the runs' details"),
]


@pytest.mark.parametrize(("section", "key", "carries"), HTTP_KEYS, ids=[k[0] for k in HTTP_KEYS])
def test_plain_http_to_another_machine_is_refused_naming_the_key_to_set(
    tmp_path: Path, section: str, key: str, carries: str
) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f"{section}:\n  {key}: http://remote.example.net/x?api-key=S3CRET\n")
    with pytest.raises(ConfigError) as refused:
        load_config(path, env={})
    assert str(refused.value) == (
        f"{path}:2:3: {section}.{key}: plain http:// to remote.example.net, which is not this "
        f"machine, would send {carries} in clear: use https://, or set "
        f"{section}.allow_insecure_http: true"
    )
    assert "S3CRET" not in str(refused.value)

    # allowed, explicitly, for that section only (wherever the key is written)
    path.write_text(
        f"{section}:\n  {key}: http://remote.example.net/x\n  allow_insecure_http: true\n"
    )
    config = load_config(path, env={})
    assert getattr(getattr(config, section), key) == "http://remote.example.net/x"
    other = next(s for s in HTTP_KEYS if s[0] != section)
    path.write_text(
        f"{section}:\n  allow_insecure_http: true\n"
        f"{other[0]}:\n  {other[1]}: http://remote.example.net/x\n"
    )
    with pytest.raises(ConfigError, match=f"set {other[0]}.allow_insecure_http: true"):
        load_config(path, env={})


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080",
        "http://127.5.6.7/rpc",
        "http://[::1]:9/",
        "http://localhost:1",
        "http://LOCALHOST",
        "http://[::ffff:127.0.0.1]:80",
    ],
)
def test_plain_http_to_this_machine_stays_allowed(url: str) -> None:
    config = Config.model_validate(
        {"api": {"base_url": url}, "rpc": {"url": url}, "notify": {"webhook_url": url}}
    )
    assert config.api.base_url == url.rstrip("/")
    assert config.rpc.url == url


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1@evil.example/",  # user info, then the real host
        "http://127.0.0.1.evil.example/",
        "http://localhost.evil.example/",
        "http://0x7f000001/",  # spellings a resolver may turn into loopback: not trusted
        "http://2130706433/",
        "http://127.1/",
        "http://0.0.0.0/",
        "http://10.0.0.1/",
        "http://[::2]/",
    ],
)
def test_hosts_that_only_look_local_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError, match=r"set rpc\.allow_insecure_http: true"):
        load_data(tmp_path, {"rpc": {"url": url}})


@pytest.mark.parametrize(
    ("section", "key", "url", "message"),
    [
        ("rpc", "url", "ftp://rpc.example.net", "must start with http:// or https://"),
        ("rpc", "url", "rpc.example.net", "must start with http:// or https://"),
        ("notify", "webhook_url", "not a url", "must start with http:// or https://"),
        ("notify", "webhook_url", "https://", "has no host"),
    ],
)
def test_malformed_urls_are_refused_at_load(
    tmp_path: Path, section: str, key: str, url: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=f":1:[0-9]+: {section}.{key}: {message}$"):
        load_data(tmp_path, {section: {key: url}})


def test_https_goes_anywhere() -> None:
    url = "https://rpc.example.net/?api-key=x"
    config = Config.model_validate({"rpc": {"url": url}, "api": {"base_url": "https://a.b"}})
    assert config.rpc.url == url


def test_loopback_hosts() -> None:
    assert is_loopback_host("127.0.0.1")
    assert is_loopback_host("127.255.255.254")
    assert is_loopback_host("::1")
    assert is_loopback_host("localhost")
    assert not is_loopback_host("localhost.")
    assert not is_loopback_host("128.0.0.1")
    assert not is_loopback_host("fe80::1%lo")

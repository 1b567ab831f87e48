"""The daemon config: defaults, paths, and one-line `file:line:col:` errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import api_key, config_path, load_config, mask_url
from jupcron.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(text)
    return path


def test_a_full_config_loads_and_resolves_relative_paths(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "api:\n  base_url: https://api.jup.ag/\n  key_file: secrets/api-key\n"
        "wallet:\n  keypair: keypair.json\n"
        "database:\n  url: sqlite:////var/lib/jupcron/jupcron.db\n"
        "plans:\n  dir: plans\n",
    )
    config = load_config(path, env={})
    assert config.api.base_url == "https://api.jup.ag"
    assert config.api.key_file == (tmp_path / "secrets/api-key").resolve()
    assert config.wallet.keypair == (tmp_path / "keypair.json").resolve()
    assert config.plans.dir == (tmp_path / "plans").resolve()
    assert config.source == str(path)
    assert "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4" in config.programs


def test_an_empty_file_means_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, ""), env={})
    assert config.database.url.startswith("sqlite:")
    assert config.guard.max_priority_fee_lamports == 10_000_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("database:\n  urll: sqlite:///x.db\n", ":2:3: unknown key 'database.urll' (did you mean 'url'?)"),
        ("api:\n  read_timeout: soon\n", ":2:3: api.read_timeout: Input should be a valid number"),
        ("api:\n  base_url: ftp://x\n", ":2:3: api.base_url: must start with http:// or https://"),
        ("wallets:\n  keypair: k.json\n", ":1:1: wallets: wallets.keypair must be a mapping {keypair: PATH}"),
        ("database: [1, 2]\n", ":1:1: database: Input should be a valid dictionary"),
        ("api:\n  paths:\n    ultra: swap/v2\n", ":3:5: api.paths.ultra: must start with '/'"),
        ("- just\n- a list\n", ":1:1: the config must be a mapping of sections"),
        ("api: {base_url: [\n", "invalid YAML"),
        ("guard:\n  max_priority_fee_lamports: -1\n", ":2:3: guard.max_priority_fee_lamports: Input should be greater than or equal to 0"),
    ],
)  # fmt: skip
def test_mistakes_are_one_positioned_line(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    message = str(caught.value)
    assert message.startswith(str(path))
    assert expected in message
    assert "\n" not in message
    assert "Traceback" not in message


def test_a_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: no such file"):
        load_config(tmp_path / "nope.yaml", env={})


def test_the_default_path_hints_at_config_option(tmp_path: Path) -> None:
    assert config_path(None, {}) == Path("/etc/jupcron/jupcron.yaml")
    assert config_path(None, {"JUPCRON_CONFIG": str(tmp_path / "c.yaml")}) == tmp_path / "c.yaml"
    assert config_path(tmp_path / "x.yaml", {"JUPCRON_CONFIG": "/other"}) == tmp_path / "x.yaml"


def test_api_key_sources_and_masking(tmp_path: Path) -> None:
    key_file = tmp_path / "api-key"
    key_file.write_text("jup_file_secret\n")
    key_file.chmod(0o600)
    config = load_config(write(tmp_path, f"api:\n  key_file: {key_file}\n"), env={})
    key = api_key(config, env={})
    assert key is not None
    assert key.get_secret_value() == "jup_file_secret"
    assert "jup_file_secret" not in repr(key)
    assert "jup_file_secret" not in repr(config)
    # the environment wins over the file
    env_key = api_key(config, env={"JUPITER_API_KEY": "jup_env_secret"})
    assert env_key is not None
    assert env_key.get_secret_value() == "jup_env_secret"
    # no file configured and no env: keyless
    assert api_key(load_config(write(tmp_path, ""), env={}), env={}) is None


def test_systemd_credential_is_used_when_no_file_is_configured(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "api-key").write_text("jup_cred")
    (creds / "api-key").chmod(0o400)
    config = load_config(write(tmp_path, ""), env={})
    key = api_key(config, env={"CREDENTIALS_DIRECTORY": str(creds)})
    assert key is not None
    assert key.get_secret_value() == "jup_cred"


def test_a_configured_key_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "api:\n  key_file: /nonexistent/api-key\n"), env={})
    with pytest.raises(ConfigError, match="API key file not found"):
        api_key(config, env={})
    (tmp_path / "empty").write_text("  \n")
    (tmp_path / "empty").chmod(0o600)
    config = load_config(write(tmp_path, f"api:\n  key_file: {tmp_path / 'empty'}\n"), env={})
    with pytest.raises(ConfigError, match="is empty"):
        api_key(config, env={})


def test_database_passwords_are_masked(tmp_path: Path) -> None:
    url = "postgresql+psycopg://jupcron:s3cret@db.internal/jupcron"
    assert mask_url(url) == "postgresql+psycopg://jupcron:***@db.internal/jupcron"
    config = load_config(write(tmp_path, f"database:\n  url: {url}\n"), env={})
    assert "s3cret" not in repr(config)
    assert "s3cret" not in str(config)


def test_an_ignored_key_still_loads(tmp_path: Path) -> None:
    """`runner.default_grace` does nothing (a plan's grace counts); old configs keep loading."""
    config = load_config(write(tmp_path, "runner:\n  default_grace: 120\n"), env={})
    assert config.runner.default_grace == 120
    assert load_config(write(tmp_path, "runner: {}\n"), env={}).runner.default_grace is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///jupcron.db", "sqlite:///{base}/jupcron.db"),
        ("sqlite:///state/../jupcron.db?timeout=3", "sqlite:///{base}/jupcron.db?timeout=3"),
        ("sqlite:////var/lib/jupcron/jupcron.db", "sqlite:////var/lib/jupcron/jupcron.db"),
        ("postgresql+psycopg://jupcron@db/jupcron", "postgresql+psycopg://jupcron@db/jupcron"),
    ],
)
def test_a_relative_sqlite_file_is_relative_to_the_config_file(
    tmp_path: Path, url: str, expected: str
) -> None:
    path = write(tmp_path, f"database:\n  url: '{url}'\n")
    config = load_config(path, env={})
    assert config.database.url == expected.format(base=tmp_path.resolve())


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("sqlite://", "names no database file: a database in memory is gone"),
        ("sqlite:///:memory:", "names no database file"),
        ("sqlite:///file:j?mode=memory&uri=true", "names no database file"),
        ("postgresql+psycopg2://jupcron@db/jupcron", "names the driver postgresql+psycopg2"),
        ("postgresql+asyncpg://jupcron@db/jupcron", "psycopg 3: write postgresql+psycopg://"),
    ],
)
def test_a_database_url_that_cannot_be_a_store_is_refused(
    tmp_path: Path, url: str, said: str
) -> None:
    """A database in memory would make every command ask for `db upgrade`, which cannot
    stick; another PostgreSQL driver was reported as a missing extra."""
    path = write(tmp_path, f"database:\n  url: '{url}'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert str(caught.value).startswith(f"{path}:2:3: database.url: ")
    assert said in str(caught.value)


def test_an_empty_plans_dir_is_refused(tmp_path: Path) -> None:
    """`plans.dir: ""` silently meant whatever folder the command ran in."""
    path = write(tmp_path, "plans:\n  dir: ''\n")
    with pytest.raises(ConfigError, match=r":2:3: plans.dir: is empty: give the folder"):
        load_config(path, env={})


def test_every_path_key_is_relative_to_the_config_file(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    path = folder / "jupcron.yaml"
    path.write_text(
        "api:\n  key_file: api-key\nwallet:\n  keypair: keys/k.json\n"
        "database:\n  url: sqlite:///state/j.db\nplans:\n  dir: plans\n"
        "safety:\n  kill_switch_file: STOP\n"
    )
    config = load_config(path, env={})
    base = folder.resolve()
    assert config.api.key_file == base / "api-key"
    assert config.wallet.keypair == base / "keys/k.json"
    assert config.database.url == f"sqlite:///{base}/state/j.db"
    assert config.plans.dir == base / "plans"
    assert config.safety.kill_switch_file == base / "STOP"


USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("safety:\n  caps:\n  - mint: USDC\n    per_day: 5\n",
         f":3:5: safety.caps.0.mint: 'USDC' is a symbol, not a mint address (did you mean "
         f"USDC's mint '{USDC}'?)"),
        ("safety:\n  caps:\n  - mint: sol\n    per_day: 5\n",
         "'sol' is a symbol, not a mint address (did you mean SOL's mint "
         "'So11111111111111111111111111111111111111112'?)"),
        (f"safety:\n  caps:\n  - mint: {USDC[:-1]}\n    per_day: 5\n",  # truncated
         f"safety.caps.0.mint: '{USDC[:-1]}' is not USDC's mint but a mistyped or truncated "
         f"copy of it (did you mean '{USDC}'?)"),
        (f"safety:\n  caps:\n  - mint: {USDC[:20] + 'X' + USDC[21:]}\n    per_week: 5\n",
         "is not USDC's mint but a mistyped or truncated copy of it"),
        ("safety:\n  caps:\n  - mint: x\n    per_day: 5\n",
         "safety.caps.0.mint: 'x' is not a valid base58 public key"),
        ("safety:\n  caps:\n  - mint: 12\n    per_day: 5\n",
         "safety.caps.0.mint: must be a base58 public key (a string)"),
        ("price:\n  feeds:\n    USDT: 7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaYKZsfmXgRN\n",
         f"price.feeds: mint 'USDT' is a symbol, not a mint address (did you mean USDT's "
         f"mint '{USDT}'?)"),
        ("guard:\n  extra_programs: [Stake11111]\n",
         ":2:20: guard.extra_programs.0: 'Stake11111' is not a valid base58 public key"),
        ("guard:\n  allowed_programs: [JUP6]\n",
         "guard.allowed_programs.0: 'JUP6' is not a valid base58 public key"),
    ],
)  # fmt: skip
def test_a_mint_or_program_that_is_not_its_address_is_refused(
    tmp_path: Path, text: str, expected: str
) -> None:
    """Before: ``safety.caps[].mint`` was any string; caps match a run's input mint
    exactly (runner/preflight.py), so ``mint: USDC`` or a truncated address loaded, and
    `config check` said ok, but the cap never applied."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert expected in str(caught.value), str(caught.value)


def test_a_cap_that_limits_nothing_is_refused(tmp_path: Path) -> None:
    # before: it loaded, and `config check` said ok, for a budget that capped nothing
    path = write(tmp_path, f"safety:\n  caps:\n  - mint: {USDC}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert f"a cap on {USDC} sets neither per_day nor per_week" in str(caught.value)
    assert "safety.caps.0" in str(caught.value)


def test_a_cap_on_a_mint_address_loads(tmp_path: Path) -> None:
    other = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"  # BONK: no symbol of ours
    text = (
        f"safety:\n  caps:\n  - mint: {USDC}\n    per_day: 5\n  - mint: {other}\n    per_week: 9\n"
    )
    config = load_config(write(tmp_path, text), env={})
    assert [c.mint for c in config.safety.caps] == [USDC, other]

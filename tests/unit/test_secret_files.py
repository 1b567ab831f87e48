"""Secret files: the API key file is checked like the keypair (owner, mode, a
regular file we can read), systemd's 0440 credentials pass, and a key an HTTP
header cannot carry is refused when it is read, naming the file, never the key."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from jupcron.api.client import JupiterClient
from jupcron.chain.wallet import load_wallet, write_keypair_file
from jupcron.config import Config, api_key
from jupcron.errors import ConfigError, KeypairError
from jupcron.private import is_credential

KEY = "jup_Z9secretKEY42"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")


def key_file(folder: Path, content: str | bytes = KEY + "\n", mode: int = 0o600) -> Path:
    path = folder / "api-key"
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    path.chmod(mode)
    return path


def config_with(path: Path) -> Config:
    return Config.model_validate({"api": {"key_file": str(path)}})


def read_key(path: Path, env: dict[str, str] | None = None) -> str:
    key = api_key(config_with(path), env=env or {})
    assert key is not None
    return key.get_secret_value()


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o606, 0o620, 0o601, 0o777])
def test_a_key_file_group_or_others_can_access_is_refused_with_the_chmod_to_run(
    tmp_path: Path, mode: int
) -> None:
    path = key_file(tmp_path, mode=mode)
    with pytest.raises(ConfigError) as refused:
        read_key(path)
    assert str(refused.value) == (
        f"{path}: permissions {mode:04o} are too open: the API key file is accessible "
        f"by group or others; run: chmod 600 {path}"
    )
    assert KEY not in str(refused.value)


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_key_file_is_read_and_its_trailing_newline_dropped(
    tmp_path: Path, mode: int
) -> None:
    assert read_key(key_file(tmp_path, KEY + "\n", mode)) == KEY
    assert read_key(key_file(tmp_path, f"  {KEY}\r\n\n", mode)) == KEY


def test_the_default_credential_is_checked_too(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    path = key_file(creds, mode=0o444)  # others may read: not systemd's doing
    config = Config()
    with pytest.raises(ConfigError, match=r"permissions 0444 are too open.*run: chmod 600"):
        api_key(config, env={"CREDENTIALS_DIRECTORY": str(creds)})
    path.chmod(0o400)
    key = api_key(config, env={"CREDENTIALS_DIRECTORY": str(creds)})
    assert key is not None
    assert key.get_secret_value() == KEY


def test_systemd_credentials_0440_pass_for_the_key_and_the_keypair(tmp_path: Path) -> None:
    """systemd writes a credential 0400, owned by root, plus an ACL entry for the
    service's user: stat shows the ACL mask as group read (0440)."""
    creds = tmp_path / "run-credentials-jupcron.service"
    creds.mkdir()
    key = key_file(creds, mode=0o440)
    keypair = creds / "keypair"
    wallet = write_keypair_file(keypair)
    keypair.chmod(0o440)
    env = {"CREDENTIALS_DIRECTORY": str(creds)}

    assert read_key(key, env) == KEY  # configured path inside the credentials directory
    from_default = api_key(Config(), env=env)  # or found there by name
    assert from_default is not None
    assert from_default.get_secret_value() == KEY
    assert load_wallet(None, env=env) == wallet
    assert load_wallet(keypair, env=env) == wallet

    # the same files anywhere else are refused
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("api-key", "keypair"):
        shutil.copy2(creds / name, elsewhere / name)
    with pytest.raises(ConfigError, match=r"permissions 0440 are too open.*chmod 600"):
        read_key(elsewhere / "api-key", env)
    with pytest.raises(KeypairError, match=r"permissions 0440 are too open.*chmod 600"):
        load_wallet(elsewhere / "keypair", env=env)


@pytest.mark.parametrize("mode", [0o444, 0o460, 0o450, 0o404, 0o442])
def test_in_the_credentials_directory_only_group_read_is_let_through(
    tmp_path: Path, mode: int
) -> None:
    path = key_file(tmp_path, mode=mode)
    with pytest.raises(ConfigError, match=f"permissions {mode:04o} are too open"):
        read_key(path, {"CREDENTIALS_DIRECTORY": str(tmp_path)})


def test_what_counts_as_a_credentials_directory(tmp_path: Path) -> None:
    unit = Path("/run/credentials/jupcron.service")
    assert is_credential(unit / "api-key", {})
    assert is_credential(unit / "keypair", {})
    assert not is_credential(Path("/run/credentials/api-key"), {})
    assert not is_credential(Path("/run/credentialsX/jupcron.service/api-key"), {})
    assert not is_credential(Path("/run/jupcron/api-key"), {})
    assert is_credential(tmp_path / "api-key", {"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert not is_credential(tmp_path / "sub" / "api-key", {"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert not is_credential(tmp_path / "api-key", {})


@as_root
def test_a_key_file_or_keypair_another_user_owns_is_refused(tmp_path: Path) -> None:
    path = key_file(tmp_path)
    os.chown(path, 4242, 4242)
    with pytest.raises(ConfigError) as refused:
        read_key(path)
    assert str(refused.value) == (
        f"{path}: the API key file belongs to uid 4242, who could change it; it must belong "
        f"to the user jupcron runs as (uid 0) or root; run as root: chown 0 {path}"
    )
    keypair = tmp_path / "keypair.json"
    write_keypair_file(keypair)
    os.chown(keypair, 4242, 4242)
    with pytest.raises(KeypairError, match=r"keypair file belongs to uid 4242"):
        load_wallet(keypair)
    os.chown(keypair, 0, 0)
    load_wallet(keypair)


def test_a_key_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "api-key"
    folder.mkdir(mode=0o700)
    with pytest.raises(ConfigError, match=r"api-key: the API key path is not a regular file$"):
        read_key(folder)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)  # opened without blocking: no writer is needed to get the answer
    with pytest.raises(ConfigError, match=r"fifo: the API key path is not a regular file$"):
        read_key(fifo)


def test_missing_and_empty_key_files_keep_their_messages(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as missing:
        read_key(tmp_path / "nope")
    assert str(missing.value) == (
        f"{tmp_path / 'nope'}: API key file not found (set api.key_file or JUPITER_API_KEY)"
    )
    with pytest.raises(ConfigError, match=r"the API key file is empty$"):
        read_key(key_file(tmp_path, " \n"))
    with pytest.raises(ConfigError, match=r"cannot read the API key file: not UTF-8 text$"):
        read_key(key_file(tmp_path, b"jup_\xff\xfe"))


BAD_KEYS = [
    # (case, key as written, what the message says)
    ("non-ASCII letter", "jup_caf\u00e9_key", "a non-ASCII character (character 8)"),
    ("emoji", "jup_\U0001f511", "a non-ASCII character (character 5)"),
    ("non-breaking space", "jup\u00a0key", "a non-ASCII character (character 4)"),
    ("line break inside", "jup_first\njup_second", "a line break (character 10)"),
    ("carriage return inside", "jup_a\rb", "a line break (character 6)"),
    ("control character", "jup\x01key", "a control character (character 4)"),
    ("tab", "jup\tkey", "a control character (character 4)"),
    ("escape", "jup\x1b[2Jkey", "a control character (character 4)"),
    ("delete", "jup\x7fkey", "a control character (character 4)"),
    ("NUL", "jup\x00key", "a control character (character 4)"),
]


@pytest.mark.parametrize(("key", "kind"), [c[1:] for c in BAD_KEYS], ids=[c[0] for c in BAD_KEYS])
def test_a_key_a_header_cannot_carry_is_a_config_error_naming_the_file(
    tmp_path: Path, key: str, kind: str
) -> None:
    path = key_file(tmp_path, key + "\n")
    with pytest.raises(ConfigError) as refused:
        read_key(path)
    message = str(refused.value)
    assert message == (
        f"{path}: the API key holds {kind}, which an HTTP header cannot carry; "
        "the key must be one line of visible ASCII"
    )
    assert "jup_" not in message.replace(str(path), "")

    with pytest.raises(ConfigError) as from_env:
        api_key(Config(), env={"JUPITER_API_KEY": key})
    assert str(from_env.value).startswith(f"$JUPITER_API_KEY: the API key holds {kind}")


def test_without_the_check_the_client_would_fail_on_its_first_request() -> None:
    """What the load-time check saves: httpx cannot encode such a key at request time."""
    client = JupiterClient(
        "http://127.0.0.1:9",
        api_key=SecretStr("jup_caf\u00e9"),
        transport=httpx.MockTransport(lambda request: httpx.Response(200, json={})),
    )
    with pytest.raises(UnicodeEncodeError):
        client.positions("11111111111111111111111111111111")
    client.close()


def test_inner_spaces_and_visible_ascii_are_carried(tmp_path: Path) -> None:
    odd = "jup_!#$%&'*+-.^_`|~:;<=>?@[]{}() a"
    assert read_key(key_file(tmp_path, odd + "\n")) == odd


def test_an_empty_credential_is_keyless_an_empty_key_file_is_not(tmp_path: Path) -> None:
    """The shipped units default the credential to empty (`SetCredential=api-key:`) when
    the install wrote no key file: keyless, as documented. A configured `api.key_file`
    that is empty stays an error (a key was meant)."""
    creds = tmp_path / "creds"
    creds.mkdir()
    empty = key_file(creds, "", mode=0o400)
    env = {"CREDENTIALS_DIRECTORY": str(creds)}
    assert api_key(Config(), env=env) is None
    with pytest.raises(ConfigError, match=r"the API key file is empty$"):
        read_key(empty, env)
    empty.chmod(0o444)  # the credential's checks still apply to an empty one
    with pytest.raises(ConfigError, match=r"permissions 0444 are too open"):
        api_key(Config(), env=env)

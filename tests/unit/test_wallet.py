"""Keypair files: loading, every refusal with its one line, writing new ones."""

from __future__ import annotations

import json
import pickle
import stat
from pathlib import Path

import pytest
from solders.keypair import Keypair
from structlog.testing import capture_logs

from jupcron.chain.wallet import Wallet, load_wallet, write_keypair_file
from jupcron.errors import FatalError, KeypairError
from tests.fixtures.wallet import KeypairFile


def _secret_list(keypair: Keypair) -> list[int]:
    return list(bytes(keypair))


def _assert_no_secret(text: str, keypair: Keypair) -> None:
    secret = bytes(keypair)
    assert str(keypair) not in text  # solders prints the secret as base58
    assert json.dumps(list(secret[:32]))[1:-1] not in text
    assert secret[:32].hex() not in text


def test_loads_a_solana_cli_keypair(keypair_file: KeypairFile) -> None:
    keypair = Keypair()
    path = keypair_file(_secret_list(keypair))
    with capture_logs() as logs:
        wallet = load_wallet(path)
    assert wallet.pubkey == keypair.pubkey()
    assert wallet.address == str(keypair.pubkey())
    assert logs == []  # the caller logs what it needs; nothing here can leak


def test_loads_from_the_systemd_credentials_directory(tmp_path: Path) -> None:
    written = write_keypair_file(tmp_path / "keypair")
    wallet = load_wallet(None, env={"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert wallet == written


def test_configured_path_wins_over_credentials(tmp_path: Path) -> None:
    (tmp_path / "creds").mkdir()
    write_keypair_file(tmp_path / "creds" / "keypair")
    mine = write_keypair_file(tmp_path / "mine.json")
    env = {"CREDENTIALS_DIRECTORY": str(tmp_path / "creds")}
    assert load_wallet(tmp_path / "mine.json", env=env) == mine


def test_no_keypair_configured_says_where_to_put_it() -> None:
    with pytest.raises(KeypairError) as err:
        load_wallet(None, env={})
    assert "wallet.keypair" in str(err.value)
    assert "\n" not in str(err.value)


def _good() -> list[int]:
    return _secret_list(Keypair())


def _mismatched() -> list[int]:
    return _secret_list(Keypair())[:32] + list(bytes(Keypair().pubkey()))


BAD_FILES: list[tuple[str, object, int, str]] = [
    # (case, content, mode, expected message after "<path>: ")
    ("malformed json", "[1, 2, 3", 0o600, "not a Solana keypair file: malformed JSON at line 1"),
    ("empty file", "", 0o600, "not a Solana keypair file: malformed JSON at line 1 column 1"),
    ("not an array", '{"secret": 1}', 0o600, "expected a JSON array of 64 integers"),
    ("too short", list(range(63)), 0o600, "expected a JSON array of 64 integers, found 63 items"),
    ("too long", list(range(65)), 0o600, "expected a JSON array of 64 integers, found 65 items"),
    ("above 255", [*range(63), 256], 0o600, "item 64 is not an integer from 0 to 255"),
    ("negative", [-1, *range(63)], 0o600, "item 1 is not an integer from 0 to 255"),
    ("not integers", [1.5] * 64, 0o600, "item 1 is not an integer from 0 to 255"),
    ("booleans", [True] * 64, 0o600, "item 1 is not an integer from 0 to 255"),
    ("binary", b"\xff\xfe\x00", 0o600, "not a Solana keypair file: not UTF-8 text"),
    (
        "public half does not match",
        "MISMATCH",
        0o600,
        "the public key (last 32 numbers) does not match the secret key",
    ),
    ("readable by group", "GOOD", 0o640, "permissions 0640 are too open"),
    ("readable by others", "GOOD", 0o604, "permissions 0604 are too open"),
]


@pytest.mark.parametrize(
    ("content", "mode", "expected"),
    [case[1:] for case in BAD_FILES],
    ids=[case[0] for case in BAD_FILES],
)
def test_bad_keypair_files_are_refused_with_one_line(
    keypair_file: KeypairFile, content: object, mode: int, expected: str
) -> None:
    if content == "MISMATCH":
        content = _mismatched()
    elif content == "GOOD":
        content = _good()
    assert isinstance(content, (str, bytes, list))
    path = keypair_file(content, mode=mode)
    with pytest.raises(KeypairError) as err:
        load_wallet(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message
    assert isinstance(err.value, FatalError)
    if isinstance(content, list):  # no number of the file is quoted back
        assert json.dumps(content)[1:-1] not in message


def test_too_open_file_says_chmod_600(keypair_file: KeypairFile) -> None:
    path = keypair_file(_good(), mode=0o644)
    with pytest.raises(KeypairError) as err:
        load_wallet(path)
    assert str(err.value).endswith(f"run: chmod 600 {path}")


def test_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(KeypairError) as err:
        load_wallet(path)
    assert str(err.value) == (
        f"{path}: keypair file not found (make a new one with: jupcron wallet new {path})"
    )


def test_a_missing_credential_points_at_the_unit(tmp_path: Path) -> None:
    with pytest.raises(KeypairError) as err:
        load_wallet(None, env={"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert str(err.value) == (
        f"{tmp_path / 'keypair'}: the systemd credential 'keypair' is missing "
        "(check LoadCredential= in the unit)"
    )


def test_no_keypair_at_all_says_how_to_make_one() -> None:
    with pytest.raises(KeypairError, match=r"make a new one with: jupcron wallet new PATH\)$"):
        load_wallet(None, env={})


def test_unreadable_file(keypair_file: KeypairFile) -> None:
    path = keypair_file(_good(), mode=0o000)
    if path.stat().st_uid == 0 or _readable_anyway(path):
        pytest.skip("running as root: permissions do not stop reading")
    with pytest.raises(KeypairError) as err:
        load_wallet(path)
    assert str(err.value) == f"{path}: cannot read the keypair file: Permission denied"


def _readable_anyway(path: Path) -> bool:
    try:
        path.read_bytes()
    except PermissionError:
        return False
    return True


def test_a_path_that_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "keypair.json"
    with pytest.raises(KeypairError) as err:
        load_wallet(path)
    assert str(err.value) == f"{path}: cannot read the keypair file: Not a directory"


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir(mode=0o700)
    with pytest.raises(KeypairError, match="not a regular file"):
        load_wallet(tmp_path / "dir")


def test_wrong_secret_never_appears_in_the_error(keypair_file: KeypairFile) -> None:
    keypair = Keypair()
    content = _secret_list(keypair)[:32] + list(bytes(Keypair().pubkey()))
    with pytest.raises(KeypairError) as err:
        load_wallet(keypair_file(content))
    _assert_no_secret(str(err.value), keypair)


def test_wallet_repr_and_str_show_only_the_address() -> None:
    wallet = Wallet.generate()
    keypair = wallet._keypair
    assert repr(wallet) == str(wallet) == f"Wallet(address={wallet.address!r})"
    for text in (f"{wallet}", repr([wallet]), repr({"w": wallet})):
        _assert_no_secret(text, keypair)


def test_wallet_cannot_be_pickled() -> None:
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(Wallet.generate())


def test_write_keypair_file_is_private_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "new.json"
    wallet = write_keypair_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert len(data) == 64
    assert all(0 <= v <= 255 for v in data)
    assert load_wallet(path) == wallet


def test_write_keypair_file_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "taken.json"
    path.write_text("precious")
    with pytest.raises(KeypairError, match="already exists; refusing to overwrite"):
        write_keypair_file(path)
    assert path.read_text() == "precious"


def test_write_keypair_file_in_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(KeypairError, match="cannot create the keypair file"):
        write_keypair_file(tmp_path / "missing" / "k.json")

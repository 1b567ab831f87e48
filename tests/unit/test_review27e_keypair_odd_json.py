"""A keypair file whose JSON Python's decoder cannot take in (a number of more than
4,300 digits, arrays nested thousands deep: both within the file's 64 KiB) is a
`KeypairError` naming the file, as any other file that is no keypair. They raised
`ValueError` and `RecursionError`, which `load_wallets` does not expect: the
daemon's start ended in a traceback (restarted by systemd, again and again) where a
one-line "not a Solana keypair file" stops it once."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.chain.wallet import load_wallet
from jupcron.errors import KeypairError

ODD = {
    "long number": "[" + "9" * 5000 + "]",
    "deep arrays": "[" * 32000 + "]" * 32000,
}


@pytest.mark.parametrize("text", list(ODD.values()), ids=list(ODD))
def test_json_the_decoder_cannot_take_is_not_a_keypair(tmp_path: Path, text: str) -> None:
    file = tmp_path / "keypair.json"
    file.write_text(text)
    file.chmod(0o600)
    with pytest.raises(KeypairError, match=rf"^{file}: not a Solana keypair file: "):
        load_wallet(file, {})

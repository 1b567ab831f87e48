"""A ``$JUPITER_API_KEY`` that holds only whitespace (``JUPITER_API_KEY=" "``, a
newline from ``$(cat empty-file)`` kept by an env file) is no key: as an empty
variable, it leaves the choice to ``api.key_file`` (else the credential, else
keyless). It was taken as the key "": every request carried an empty
``x-api-key`` header (refused by the API) paced at the keyed rate, and the key
file the config names was never read."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import api_key, load_config


def _config(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "jupcron.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env={})


@pytest.mark.parametrize("blank", [" ", "\n", " \t\r\n"])
def test_a_blank_variable_leaves_the_key_to_the_key_file(tmp_path: Path, blank: str) -> None:
    key_file = tmp_path / "api-key"
    key_file.write_text("jup_file_secret\n")
    key_file.chmod(0o600)
    config = _config(tmp_path, f"api:\n  key_file: {key_file}\n")
    key = api_key(config, env={"JUPITER_API_KEY": blank})
    assert key is not None
    assert key.get_secret_value() == "jup_file_secret"


@pytest.mark.parametrize("blank", [" ", "\n"])
def test_a_blank_variable_and_no_key_file_is_keyless(tmp_path: Path, blank: str) -> None:
    config = _config(tmp_path, "")
    assert api_key(config, env={"JUPITER_API_KEY": blank}) is None

"""The API key: read on demand, never held in a field that prints."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from jupcron.config.sections import Config
from jupcron.errors import ConfigError
from jupcron.logs import mask_value
from jupcron.private import no_core_dumps, read_private


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
    # a variable of whitespace alone is unset, as an empty one: it was the key "" (an
    # empty x-api-key header on every request), and api.key_file was never read
    variable = env.get("JUPITER_API_KEY", "").strip()
    if variable:
        no_core_dumps()  # as `read_private` does for a key file
        return SecretStr(_header_safe(variable, "$JUPITER_API_KEY"))
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
    the error names the position and the kind of character, never the key. A key
    read is masked in every log line and stored text from then on (`mask_value`)."""
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
    mask_value(key)  # any text that quotes it (a log line, a stored error) shows '***'
    return key

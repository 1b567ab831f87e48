"""A config's durations and rates are finite and of a sane size. YAML reads ``.inf``
(and ``1e400``) as an infinite float, and ``1e20`` is a float too: each passed the
config's ``> 0`` check (and `jupcron config check`), then overflowed where it is
used: ``runner.blockhash_validity`` in the ``timedelta`` of every run's expiry
(OverflowError after the order, before signing), ``follow.interval`` and the other
waits in a thread's ``Event.wait``, ``api.read_timeout`` in the socket's timeout.
Each is now refused when the file is read, at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import load_config
from jupcron.errors import ConfigError

KEYS = [
    ("runner", "blockhash_validity"),
    ("runner", "recovery_interval"),
    ("runner", "shutdown_timeout"),
    ("api", "read_timeout"),
    ("api", "connect_timeout"),
    ("api", "rate_limit"),
    ("follow", "interval"),
    ("notify", "skip_summary"),
]


@pytest.mark.parametrize("value", [".inf", "1e400", "1e20"])
@pytest.mark.parametrize(("section", "key"), KEYS, ids=[f"{s}.{k}" for s, k in KEYS])
def test_an_endless_or_overflowing_value_is_refused(
    tmp_path: Path, section: str, key: str, value: str
) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f"{section}:\n  {key}: {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"jupcron.yaml:2:\d+: {section}\.{key}: "):
        load_config(path, env={})


@pytest.mark.parametrize(("section", "key"), KEYS, ids=[f"{s}.{k}" for s, k in KEYS])
def test_a_long_but_usable_value_still_loads(tmp_path: Path, section: str, key: str) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f"{section}:\n  {key}: 86400\n", encoding="utf-8")
    config = load_config(path, env={})
    assert getattr(getattr(config, section), key) == 86400

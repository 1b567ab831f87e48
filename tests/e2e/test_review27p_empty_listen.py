"""``metrics.listen: ""`` left the metrics off without a word, and `config check`
said "off (metrics.listen not set)": the operator set it, to something the daemon
cannot use. The README documents no such "off" value (its default is "none", and
an address is e.g. ``127.0.0.1:9464``), so an empty (or blank) listen is refused at
its line, as ``plans.dir: ""`` is; ``web.listen`` the same."""

from __future__ import annotations

import pytest

from tests.fixtures.daemon import DaemonEnvFactory


@pytest.mark.parametrize("section", ["metrics", "web"])
@pytest.mark.parametrize("listen", ["", "  "])
def test_an_empty_listen_is_refused_at_its_line(
    daemon_env: DaemonEnvFactory, section: str, listen: str
) -> None:
    env = daemon_env()
    env.write_config(**{section: {"listen": listen}})
    done = env.jupcron("config", "check")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"{section}.listen" in out, out
    assert "is empty" in out, out

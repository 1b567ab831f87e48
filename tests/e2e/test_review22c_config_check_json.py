"""Review 22c: `jupcron config check --format json` is JSON on stdout whatever it finds.

Before: a config that did not load (the very thing the check is for) printed one
``error:`` line on stderr and nothing on stdout, so a script reading the report
(``jupcron config check --format json | jq .ok``) met empty input instead of
``"ok": false``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import jupcron

# (what is wrong, the config's text or None for no file, what the detail names)
CASES = [
    ("unknown key", "guard:\n  nope: 1\n", "unknown key 'guard.nope'"),
    ("not YAML", "api: {base_url: [\n", "invalid YAML"),
    ("no such file", None, "no such file"),
]


@pytest.mark.parametrize(("what", "text", "named"), CASES, ids=[c[0] for c in CASES])
def test_a_config_that_does_not_load_is_a_failed_check_in_json(
    tmp_path: Path, what: str, text: str | None, named: str
) -> None:
    config = tmp_path / "jupcron.yaml"
    if text is not None:
        config.write_text(text)
        config.chmod(0o600)
    done = jupcron("--config", str(config), "config", "check", "--format", "json")
    assert done.returncode == 1, what
    assert "Traceback" not in done.stderr + done.stdout
    report = json.loads(done.stdout)  # before: '' (JSONDecodeError)
    assert report["ok"] is False
    assert [c["check"] for c in report["checks"]] == ["config"]
    (check,) = report["checks"]
    assert check["verdict"] == "fail"
    assert check["detail"].startswith(str(config)), check
    assert named in check["detail"], check
    assert check["fix"]
    assert done.stderr.startswith("error: "), done.stderr  # people still read it there
    assert list(tmp_path.iterdir()) == ([config] if text is not None else [])


def test_the_table_still_ends_on_one_error_line(tmp_path: Path) -> None:
    config = tmp_path / "jupcron.yaml"
    config.write_text("guard:\n  nope: 1\n")
    config.chmod(0o600)
    done = jupcron("--config", str(config), "config", "check")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: {config}:2:3: unknown key 'guard.nope'"), done.stderr

"""Every shipped example validates: config/jupcron.yaml, config/plans/*.yaml and
the demo's own config and plans; the example config documents every key."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from jupcron.config import Config, load_config
from jupcron.demo.workspace import CONFIG, demo_plans
from jupcron.emulator import Emulator
from jupcron.plans.load import load_plans
from jupcron.plans.schema import TriggerCancelRequest

ROOT = Path(__file__).resolve().parents[2]
CONFIG_FILE = ROOT / "config" / "jupcron.yaml"
PLAN_FILES = sorted((ROOT / "config" / "plans").glob("*.yaml"))


def test_the_example_config_is_valid_and_holds_the_defaults() -> None:
    config = load_config(CONFIG_FILE, {})
    defaults = Config()
    for section in Config.model_fields:
        if section in ("source", "digest"):  # where it was read, and its content
            continue
        assert getattr(config, section) == getattr(defaults, section), section


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += [name, *_keys(annotation, f"{prefix}{name}.")]
        else:
            out.append(name)
    return out


def test_the_example_config_mentions_every_key() -> None:
    text = CONFIG_FILE.read_text()
    written = set(re.findall(r"^[ #-]*([a-z_]+):", text, flags=re.MULTILINE))
    missing = [k for k in _keys(Config) if k not in ("source", "digest", *written)]
    assert missing == []


@pytest.mark.parametrize("path", PLAN_FILES, ids=[p.name for p in PLAN_FILES])
def test_every_example_plan_validates_without_warnings(path: Path) -> None:
    result = load_plans([path])
    assert result.problems == []
    assert result.warnings == []
    assert result.plans
    assert path.read_text().startswith("#")  # commented


def test_the_examples_cover_every_kind() -> None:
    kinds = {str(p.spec.kind) for p in load_plans(PLAN_FILES).plans}
    assert kinds == {"recurring", "trigger-cancel", "swap"}


def test_the_demo_config_and_plans_validate(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "jupcron.yaml").write_text(
        CONFIG.format(
            base_url="http://127.0.0.1:1", db_url=f"sqlite:///{tmp_path}/x.db", web_port=8123
        )
    )
    config = load_config(tmp_path / "jupcron.yaml", {})
    assert config.plans.dir == tmp_path / "plans"
    assert config.web.listen == "127.0.0.1:8123"
    assert config.wallet.keypair == tmp_path / "keypair.json"
    start = datetime(2030, 1, 1, tzinfo=UTC)
    plans = demo_plans("9yXwWmT3rAEdGBVLbD4pgxQTcDx4mQ3BFx2XoeqF1tmZ")
    body = {"plans": [p.to_yaml_dict(start) for p in plans]}
    (tmp_path / "plans" / "demo.yaml").write_text(json.dumps(body))
    result = load_plans([tmp_path / "plans"])
    assert result.problems == []
    assert {str(p.spec.kind) for p in result.plans} == {"recurring", "trigger-cancel", "swap"}
    assert len(result.plans) == len(plans)


def test_the_emulator_holds_every_order_the_examples_name() -> None:
    # the trigger-cancel examples (config/plans, and any in the README) run against a
    # fresh emulator with no seeding
    readme = (ROOT / "README.md").read_text()
    named = {
        p.spec.request.order
        for p in load_plans(PLAN_FILES).plans
        if isinstance(p.spec.request, TriggerCancelRequest)
    }
    named |= set(re.findall(r"^\s*order: ([1-9A-HJ-NP-Za-km-z]{32,44})\s*$", readme, re.MULTILINE))
    assert named  # the examples do name one
    held = Emulator().ledger.trigger_orders
    for order in named:
        assert order in held, order
        assert held[order].status == "Open"
        assert held[order].maker is None  # any wallet may cancel it (the first one owns it)

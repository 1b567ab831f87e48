"""The corpus of genuine Jupiter transactions (tests/fixtures/real) is well formed:
every file has its fields, decodes, names where it was published, and its wallet
is a required signer of the transaction. (Whether the guard accepts them is
another test's business.)"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path

import pytest
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from tests.fixtures import real

FIELDS = {"name", "api", "expect", "plan_confidence", "wallet", "note", "source", "plan", "ordered",
          "answer", "transaction"}  # fmt: skip
MIRRORS = Path("/work/.mirror")
FILES = real.files()


def _doc(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_genuine_swaps() -> None:
    swaps = [t for t in real.load_all() if t.plan["kind"] == "swap" and t.expect == "accept"]
    assert len(swaps) >= 10
    assert {t.name for t in real.load_all()} == {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture_shape(path: Path) -> None:
    doc = _doc(path)
    assert doc.keys() >= FIELDS
    assert doc["name"] == path.stem
    assert doc["expect"] in {"accept", "out-of-scope", "excluded"}
    assert doc["plan_confidence"] in {"high", "medium", "low"}
    assert doc["note"].strip()
    assert {"name", "kind", "request"} <= doc["plan"].keys()
    assert isinstance(doc["plan"]["request"], dict)
    assert isinstance(doc["ordered"], dict)
    assert doc["answer"] is None or isinstance(doc["answer"], dict)
    assert doc["answer"] is None or "transaction" not in doc["answer"]
    if doc["plan"]["kind"] == "swap":
        request = doc["plan"]["request"]
        for key in ("inputMint", "outputMint"):
            Pubkey.from_string(request[key])
        assert isinstance(request["amount"], int)
        assert request["amount"] > 0


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_wallet_is_a_required_signer(path: Path) -> None:
    doc = _doc(path)
    tx = VersionedTransaction.from_bytes(base64.b64decode(doc["transaction"], validate=True))
    assert base64.b64encode(bytes(tx)).decode() == doc["transaction"]  # byte for byte as published
    message = tx.message
    signers = [str(k) for k in message.account_keys[: message.header.num_required_signatures]]
    assert doc["wallet"] in signers
    assert all(sig == type(sig).default() for sig in tx.signatures)  # unsigned, as issued


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_source_is_named(path: Path) -> None:
    source = _doc(path)["source"]
    if source.get("repo") is None:  # found in the public code index, repository unknown
        assert re.fullmatch(r"\d+", source["index_id"])
        assert source["where"].strip()
        return
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", source["repo"])
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert source["path"]
    assert isinstance(source["line"], int)
    assert source["line"] > 0
    git = MIRRORS / source["repo"].replace("/", "+") / "repo"
    if not git.is_dir():
        return  # the mirror is not on this machine (CI): the sha's form is all we can check
    text = subprocess.run(
        ["git", "-C", str(git), "show", f"{source['commit']}:{source['path']}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert _doc(path)["transaction"] in text.splitlines()[source["line"] - 1]

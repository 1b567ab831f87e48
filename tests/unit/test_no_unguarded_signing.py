"""No path signs without the guard: the wallet's signing function is called in
two places only, and in the runner only by the function that has just asked
txguard for its verdict. A new call site fails this test until it is reviewed."""

from __future__ import annotations

import ast
from pathlib import Path

DAEMON = Path(__file__).resolve().parents[2] / "daemon"


def _calls(tree: ast.AST) -> dict[str, set[str]]:
    """Function name -> the names it calls (plain or attribute calls)."""
    found: dict[str, set[str]] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            names = set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    f = node.func
                    names.add(f.id if isinstance(f, ast.Name) else getattr(f, "attr", ""))
            found[fn.name] = names
    return found


def test_only_the_guard_and_the_guarded_runner_step_sign() -> None:
    callers: dict[str, list[str]] = {}
    for path in DAEMON.rglob("*.py"):
        if path.name == "wallet.py":
            continue  # where signing is defined
        for fn, names in _calls(ast.parse(path.read_text())).items():
            if "sign_transaction" in names:
                callers.setdefault(str(path.relative_to(DAEMON)), []).append(fn)
                assert "check" in names, f"{path}:{fn} signs without calling txguard's check"
    assert "txguard/guard.py" in callers
    assert all(f == "txguard/guard.py" or f.startswith("runner/") for f in callers), callers


# the one place the emulator signs: as the JupiterZ market maker it stands in for, with
# that maker's own key (derived from the quote), never a wallet's (it holds none)
EMULATED_MAKER = ("emulator/execute.py", "_signed_by_maker")


def test_only_the_checked_challenge_path_signs_a_message() -> None:
    """The message signer (`sign_message`, a login challenge) is called only by
    txguard's challenge module, in a function that has just checked the challenge
    (and by the emulator's market maker, `EMULATED_MAKER`, alone); and the wallet's
    raw `sign` is called nowhere outside wallet.py."""
    callers: dict[str, list[str]] = {}
    for path in DAEMON.rglob("*.py"):
        if path.name == "wallet.py":
            continue
        for fn, names in _calls(ast.parse(path.read_text())).items():
            where = str(path.relative_to(DAEMON))
            assert "sign" not in names, f"{where}:{fn} calls a raw sign(), bypassing both guards"
            if "sign_message" in names:
                callers.setdefault(where, []).append(fn)
                if (where, fn) != EMULATED_MAKER:
                    assert "check_challenge" in names, f"{where}:{fn} signs a message unchecked"
    maker_file, maker_fn = EMULATED_MAKER
    assert callers == {"txguard/challenge.py": ["sign_challenge"], maker_file: [maker_fn]}, callers

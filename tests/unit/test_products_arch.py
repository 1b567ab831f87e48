"""The products' shape, read from the source (issue 29): what a plan kind does is
decided inside `daemon/products/` (each product's package, and the two registries
looked up by kind), nowhere else. Outside it, no module branches on a product's
request type (``isinstance(request, SwapRequest)``) or on a kind
(``plan.kind is PlanKind.SWAP``, ``kind == str(PlanKind.…)``, ``plan.kind.trigger_v2``,
``match kind: case PlanKind.…``, a table keyed by ``PlanKind.…``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jupcron
from jupcron.products import kinds

ROOT = Path(jupcron.__file__).parent
PRODUCTS = ROOT / "products"
REQUEST_TYPES = frozenset(spec.model.__name__ for spec in kinds.SPECS.values()) | {
    "Request",  # the union of them all (jupcron.plans.schema)
    "TriggerV2Request",
}


def _defines_plan_kind(tree: ast.Module) -> bool:
    """The module that defines the enum itself (wherever the domain words live)."""
    return any(isinstance(n, ast.ClassDef) and n.name == "PlanKind" for n in tree.body)


def _names(node: ast.expr) -> set[str]:
    """The class names an isinstance() second argument mentions (tuples, ``A | B``)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts)) if node.elts else set()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names(node.left) | _names(node.right)
    return set()


def _kind_member(node: ast.AST) -> bool:
    """``PlanKind.X`` or ``str(PlanKind.X)``."""
    if isinstance(node, ast.Call) and len(node.args) == 1:
        node = node.args[0]
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "PlanKind"
        and node.attr.isupper()
    )


def _operands(node: ast.Compare) -> list[ast.expr]:
    """A comparison's operands, and the elements of a literal it tests membership in."""
    out: list[ast.expr] = []
    for operand in (node.left, *node.comparators):
        out.append(operand)
        if isinstance(operand, ast.Tuple | ast.List | ast.Set):
            out.extend(operand.elts)
    return out


def violations(source: str, name: str = "<source>") -> list[str]:
    """Each kind branch in `source`, as ``line: what``."""
    tree = ast.parse(source, name)
    if _defines_plan_kind(tree):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
        ):
            hit = sorted(_names(node.args[1]) & REQUEST_TYPES)
            if hit:
                found.append(f"{line}: isinstance(…, {' | '.join(hit)})")
        elif isinstance(node, ast.Compare) and any(_kind_member(x) for x in _operands(node)):
            found.append(f"{line}: a comparison with a PlanKind member")
        elif isinstance(node, ast.Dict) and any(
            k is not None and _kind_member(k) for k in node.keys
        ):
            found.append(f"{line}: a table keyed by PlanKind members")
        elif isinstance(node, ast.MatchValue) and _kind_member(node.value):
            found.append(f"{line}: a match case on a PlanKind member")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "trigger_v2"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "kind"
        ):
            found.append(f"{line}: the kind's trigger_v2 property")
    return found


OUTSIDE = sorted(p for p in ROOT.rglob("*.py") if PRODUCTS not in p.parents)


def test_there_are_modules_on_both_sides() -> None:
    assert len(OUTSIDE) > 100
    assert (PRODUCTS / "registry.py").exists()
    assert (PRODUCTS / "kinds.py").exists()


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_kind_branch_outside_the_products(path: Path) -> None:
    assert violations(path.read_text(), str(path)) == []


@pytest.mark.parametrize(
    ("planted", "what"),
    [
        ("if isinstance(plan.request, SwapRequest):\n    pass\n", "isinstance(…, SwapRequest)"),
        ("ok = isinstance(r, (RecurringRequest, int))\n", "isinstance(…, RecurringRequest)"),
        ("ok = isinstance(r, schema.TriggerV2DcaRequest | str)\n", "TriggerV2DcaRequest"),
        ("if plan.kind is PlanKind.SWAP:\n    pass\n", "comparison with a PlanKind member"),
        ("x = row.kind == str(PlanKind.TRIGGER_CANCEL)\n", "comparison with a PlanKind member"),
        ("x = kind in (PlanKind.SWAP, PlanKind.RECURRING)\n", "comparison with a PlanKind"),
        ("T = {PlanKind.SWAP: 1}\n", "a table keyed by PlanKind members"),
        ("match k:\n    case PlanKind.SWAP:\n        pass\n", "a match case"),
        ("if plan.kind.trigger_v2:\n    pass\n", "the kind's trigger_v2 property"),
    ],
)
def test_the_check_finds_a_planted_branch(planted: str, what: str) -> None:
    found = violations("from jupcron.store.types import PlanKind\n" + planted)
    assert len(found) == 1, found
    assert what in found[0]


def test_the_check_lets_lookups_and_other_types_pass() -> None:
    clean = (
        "from jupcron.products.registry import product\n"
        "step = product(plan.kind).order\n"
        "ok = isinstance(exc, ApiRejectedError) and isinstance(data, dict)\n"
        "ok = isinstance(request, spec.model)\n"
    )
    assert violations(clean) == []


def test_a_planted_module_outside_the_products_fails(tmp_path: Path) -> None:
    """The check on a real file, as the parametrized test runs it."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f(plan):\n    return plan.kind is PlanKind.RECURRING\n")
    assert violations(bad.read_text(), str(bad)) == ["2: a comparison with a PlanKind member"]

"""The fast path of `jupcron.config.yamlfile.load`: libyaml composes the nodes
(with their line marks) and we build the plain values, 10-16x faster than
ruamel's round-trip loader, which a large ``plans apply`` spent most of its time in.

It reads YAML 1.2 scalars as ruamel does (``yes`` is a string, ``1.5`` a float)
and handles only the plain cases: strings, null, booleans, decimal integers and
floats, mappings with scalar keys, sequences, aliases. Anything else (a
timestamp, ``0x1f``, ``1_000``, a merge key, a duplicate key, a tag of one's
own, an error of any kind) returns `None`, and the caller loads the file with
ruamel as before: its values and its messages stay the reference. So does a text
ruamel may read otherwise than libyaml however plain (`compose`): a ``%YAML``
directive, a line break of YAML 1.1 (NEL, LS, PS), a tab in a block's line.

A file of JSON (which is YAML) is read faster still: `jupcron.config.jsonfast`.
"""

from __future__ import annotations

import gc
import re
from abc import abstractmethod
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

import yaml

Loc = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_OTHER = "tag:jupcron,2026:other"  # resolved, but left to ruamel

_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
          "FALSE": False}  # fmt: skip

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Resolver(_LOADER):  # type: ignore[misc]
    """YAML 1.2's core schema, as ruamel reads it; what we do not build ourselves is
    tagged `_OTHER` (the walk then gives up)."""

    yaml_implicit_resolvers: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = {}


def _resolve(tag: str, pattern: str, first: str) -> None:
    _Resolver.add_implicit_resolver(tag, re.compile(pattern, re.X), list(first))


_resolve(_BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
_Resolver.add_implicit_resolver(_NULL, re.compile(r"^(?:~|null|Null|NULL|)$"), [*"~nN", ""])
_resolve(_INT, r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789")
_resolve(_FLOAT, r"^[-+]?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)$",
         "-+0123456789")  # fmt: skip
# the rest of what ruamel resolves: other ints and floats, merge keys, timestamps, '='
# (``08`` too: an int with a leading zero, 8 to ruamel, though not an octal)
_resolve(_OTHER, r"^[-+]?(?:0[bxo0-9]|[0-9_]*_)[0-9a-fA-F_]*$", "-+0123456789_")
_resolve(_OTHER, r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?$", "-+0123456789.")
_resolve(_OTHER, r"^[-+]?[0-9_]*_[0-9_]*[eE][-+]?[0-9]+$", "-+0123456789_")  # 1_0e+5
_resolve(_OTHER, r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+.")
_resolve(_OTHER, r"^(?:<<|=)$", "<=")
_resolve(_OTHER, r"^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?", "0123456789")


class GiveUp(Exception):
    """Not a plain document: load it with ruamel."""


class TooBig(Exception):
    """More values than the budget once aliases are expanded."""


# YAML 1.1's other line breaks (NEL, LS, PS), which libyaml keeps and YAML 1.2 (ruamel)
# drops: ``amount: 1<NEL>receiver: X`` is two keys to libyaml, an error to ruamel
_OLD_BREAKS = ("\x85", "\u2028", "\u2029")


def compose(text: str) -> list[Any] | None:
    """The document nodes of `text`, or None when libyaml finds it invalid, or might
    read it otherwise than ruamel (`_alike`): then ruamel reads it."""
    if not _alike(text):
        return None
    return nodes_of(text)


def _alike(text: str) -> bool:
    """Would ruamel read this text as libyaml does? Not if it has a directive, a line
    break of YAML 1.1 (`_OLD_BREAKS`), or a tab where ruamel refuses one: libyaml takes
    ``amount: 5<tab>`` (a tab after a value, a ':' or a '-'), ruamel a tab only inside
    a flow mapping or list (a file of one, of JSON say, is read alike; a comment could
    end it, and a tab after it is refused)."""
    # a directive (``%YAML 1.1`` has ruamel read ``yes`` as true, ``1:30`` as 90, which
    # libyaml's nodes, resolved here by YAML 1.2's rules, do not say); substrings, not a
    # regular expression: a megabyte's scan would cost a tenth of its composing
    if text.startswith(("%", "\ufeff%")) or "\n%" in text or "\r%" in text:
        return False
    if not text.isascii():
        if any(brk in text for brk in _OLD_BREAKS):
            return False  # (and so a directive after one)
        if text.find("\ufeff", 1) != -1:
            return False  # (a byte order mark past the start: a column to libyaml, not ruamel)
    if "\t" not in text:
        return True
    body = text.strip(" \n")
    return body[:1] in ("{", "[") and body[-1:] in ("}", "]") and "#" not in body


def nodes_of(text: str) -> list[Any] | None:
    """libyaml's document nodes of `text`, or None when it finds it invalid."""
    try:
        return list(yaml.compose_all(text, Loader=_Resolver))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        return None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a file's nodes or values are built: they
    hold no cycles (but for a recursive alias, collected once it is back on), and
    the collections their hundreds of thousands of objects set off would go over
    the whole heap again and again (half of what composing a 2,000-plan file costs)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def plain(node: Any, budget: list[int], exact: bool) -> Any:
    """The node's value as plain Python; `GiveUp` for anything but the plain cases,
    `TooBig` past the budget. Where each key and item stands is read from the nodes
    when asked (`NodePositions`), not recorded for every one."""
    budget[0] -= 1
    if budget[0] < 0:
        raise TooBig
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node, exact)
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise GiveUp
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise GiveUp
            key = _scalar(key_node, exact)
            if not isinstance(key, str | int) or isinstance(key, bool) or key in out:
                raise GiveUp  # a duplicate key (ruamel says so), or a key ruamel reads its way
            out[key] = plain(value_node, budget, exact)
        return out
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise GiveUp
        return [plain(item, budget, exact) for item in node.value]
    raise GiveUp


class Positions(MutableMapping[Loc, tuple[int, int]]):
    """Where a path inside a document stands (1-based line and column of a key, or of
    a list item), found on demand (`_find`, `_all`): a file's positions are asked for
    a few times (a plan's name, a problem), not once per value; with positions set
    by hand (``extra``) over them."""

    def __init__(self) -> None:
        self.extra: dict[Loc, tuple[int, int]] = {}

    @abstractmethod
    def _find(self, loc: Loc) -> tuple[int, int] | None:
        """Where `loc` stands, or None if the document has no such key or item."""

    @abstractmethod
    def _all(self) -> Iterator[Loc]:
        """Every key's and item's path in the document."""

    def __getitem__(self, loc: Loc) -> tuple[int, int]:
        if loc in self.extra:
            return self.extra[loc]
        found = self._find(loc)
        if found is None:
            raise KeyError(loc)
        return found

    def __iter__(self) -> Iterator[Loc]:
        yield from self.extra
        for loc in self._all():
            if loc not in self.extra:
                yield loc

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __setitem__(self, loc: Loc, position: tuple[int, int]) -> None:
        self.extra[loc] = position

    def __delitem__(self, loc: Loc) -> None:
        del self.extra[loc]


class NodePositions(Positions):
    """The positions of a document `plain` read, found in its nodes."""

    def __init__(self, root: Any) -> None:
        super().__init__()
        self.root = root

    def _find(self, loc: Loc) -> tuple[int, int] | None:
        node, mark = self.root, None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if _scalar(key_node, False) == part and not isinstance(part, bool):
                        node, mark = value_node, key_node.start_mark
                        break
                else:
                    return None
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if not 0 <= part < len(node.value):
                    return None
                node = node.value[part]
                mark = node.start_mark
            else:
                return None
        return None if mark is None else (mark.line + 1, mark.column + 1)

    def _all(self) -> Iterator[Loc]:
        return _paths(self.root, ())


def _paths(node: Any, loc: Loc) -> Iterator[Loc]:
    """Every key's and item's path under `node` (of a document `plain` read)."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            sub = (*loc, _scalar(key_node, False))
            yield sub
            yield from _paths(value_node, sub)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield (*loc, index)
            yield from _paths(item, (*loc, index))


def _scalar(node: Any, exact: bool) -> Any:
    tag, value = node.tag, node.value
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        if value not in _BOOLS:  # `!!bool yes`: ruamel reads it (True), not "not true"
            raise GiveUp
        return _BOOLS[value]
    if tag == _INT:
        try:
            return int(value)
        except ValueError:  # more digits than Python converts: ruamel's error
            raise GiveUp from None
    if tag == _FLOAT:
        if not exact:
            return float(value)
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise GiveUp from None
        if not number.is_finite():  # `!!float nan`: ruamel's float, not a Decimal
            raise GiveUp
        return number
    raise GiveUp

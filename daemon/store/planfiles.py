"""The plan files a complete `plans apply` read (`jupcron.plans.marks`), in the
store: a row per file (``plan_files``) and, in ``store_meta`` under
`KEY`, the plans revision the apply left, the folder and the config's wallet names
it was checked against. Those files still say what the store holds while the
revision, folder and wallets are the same and each file's bytes are (by stat,
else by hash: `unchanged`)."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, delete, select
from sqlalchemy.orm import Session

from jupcron.plans.marks import FileMark, digest, stat_of
from jupcron.store.bulk import insert_rows
from jupcron.store.models import PlanFileMark, StoreMeta

KEY = "plan_files"
FILES = cast(Table, PlanFileMark.__table__)


def _facts(folder: Path, wallets: Collection[str] | None, revision: int) -> dict[str, Any]:
    return {"revision": revision, "folder": str(folder),
            "wallets": None if wallets is None else sorted(wallets)}  # fmt: skip


def record(session: Session, folder: Path, wallets: Collection[str] | None,
           marks: Sequence[FileMark], revision: int) -> None:  # fmt: skip
    """Replace the recorded files with `marks` (in the caller's transaction)."""
    session.execute(delete(FILES))
    insert_rows(session, FILES, [
        {"path": m.path, "size": m.size, "mtime_ns": m.mtime_ns, "sha256": m.sha256}
        for m in marks
    ])  # fmt: skip
    value = json.dumps(_facts(folder, wallets, revision))
    row = session.get(StoreMeta, KEY)
    if row is None:
        session.add(StoreMeta(key=KEY, value=value))
    else:
        row.value = value
    session.flush()


def unchanged(session: Session, folder: Path, wallets: Collection[str] | None,
              revision: int, files: Sequence[Path]) -> bool:  # fmt: skip
    """Do `files` (the folder's plan files now) hold the bytes the last complete apply
    read, with the store at the revision it left? Only files whose size or mtime
    changed are read. False when unsure (nothing recorded, another folder or wallets)."""
    row = session.get(StoreMeta, KEY)
    if row is None or json.loads(row.value) != _facts(folder, wallets, revision):
        return False
    recorded = {r.path: r for r in session.execute(select(FILES))}
    if len(recorded) != len(files):
        return False
    for file in files:
        mark = recorded.get(str(file))
        stat = stat_of(file)
        if mark is None or stat is None:
            return False
        if stat.st_size != mark.size:
            return False
        if stat.st_mtime_ns == mark.mtime_ns:
            continue
        try:
            raw = file.read_bytes()
        except OSError:
            return False
        if digest(raw) != mark.sha256:
            return False
    return True

"""What a reload changed in the config: one line a setting (``key: old -> new``, a
URL's secret masked), and which of them wait for a restart."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from jupcron.config import MASKED, Config, mask_url

# what the daemon reads only at start: a change is reported, and waits for a restart
RESTART_ONLY = (
    "api", "wallet", "wallets", "database", "rpc", "metrics", "web.listen", "notify", "logging",
    "follow", "runner.workers", "runner.group_commit",
)  # fmt: skip


def _leaves(model: BaseModel, prefix: str = "") -> dict[str, tuple[Any, str]]:
    """Each setting's dotted key: its value, and how a log line may show it."""
    out: dict[str, tuple[Any, str]] = {}
    for name, info in type(model).model_fields.items():
        if not prefix and name in ("source", "digest"):
            continue
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out.update(_leaves(value, f"{prefix}{name}."))
        elif MASKED in info.metadata and isinstance(value, str):
            out[prefix + name] = (value, mask_url(value))
        else:
            out[prefix + name] = (value, _shown(value))
    return out


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def config_changes(old: Config, new: Config) -> list[str]:
    """What differs, one ``key: old -> new`` each, a URL's secret masked (the config
    holds no other secret: keys are in files, read at start)."""
    before, after = _leaves(old), _leaves(new)
    missing: tuple[Any, str] = (None, "none")
    out = []
    for key in sorted(before.keys() | after.keys()):
        (was, was_shown), (now, now_shown) = before.get(key, missing), after.get(key, missing)
        if was == now:
            continue
        if was_shown == now_shown:
            out.append(f"{key}: changed (its secret part is masked)")
        else:
            out.append(f"{key}: {was_shown} -> {now_shown}")
    return out


def restart_only(changes: list[str]) -> list[str]:
    """The changed keys that take effect only at the next start."""
    keys = [change.split(":", 1)[0] for change in changes]
    return [k for k in keys if any(k == p or k.startswith(p + ".") for p in RESTART_ONLY)]

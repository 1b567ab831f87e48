"""The words and numbers the page shows, made once here from a view's data and
sent in its ``text`` map: the server's first render and the script's updates
put the same strings in the same places (the script only assigns textContent).
"""

from __future__ import annotations

from typing import Any

NONE = "-"


def moment(value: str | None) -> str:
    """``2026-11-23T10:00:05Z`` -> ``2026-11-23 10:00:05 UTC``."""
    if not value:
        return NONE
    return value.replace("T", " ").replace("Z", " UTC")


def _amount(ui: str | None, base: str, symbol: str | None) -> str:
    if base == "0":
        return NONE
    if ui is not None:
        return f"{ui} {symbol}" if symbol else ui
    return f"{base} (base units)"


def plan_text(plan: dict[str, Any]) -> dict[str, str]:
    fires = plan["next_fires"]
    last = plan["last"]
    money = plan["money"] or {}
    price = money.get("average_price")
    unit = ""
    if money.get("input_symbol") and money.get("output_symbol"):
        unit = f" {money['output_symbol']}/{money['input_symbol']}"
    error = ""
    if last and last.get("error"):
        error = (
            f"{last['error_code']}: {last['error']}" if last.get("error_code") else last["error"]
        )
    return {
        "name": plan["name"],
        "description": plan["description"] or "",
        "kind": plan["kind"] + (" (dry run)" if plan["dry_run"] else ""),
        "schedule": plan["schedule"],
        "next": moment(fires[0]) if fires else "no fire time left",
        "later": ", ".join(moment(f) for f in fires[1:]),
        "last_status": last["status"] if last else "no run yet",
        "last_when": moment(last["scheduled_for"]) if last else "",
        "last_error": error,
        "spent": _amount(money.get("spent_ui"), money.get("spent", "0"), money.get("input_symbol")),
        "received": _amount(
            money.get("received_ui"), money.get("received", "0"), money.get("output_symbol")
        ),
        "price": f"{price}{unit}" if price else NONE,
        "fills": str(money.get("fills", 0)),
    }


def short(value: str | None) -> str:
    if not value:
        return NONE
    return value if len(value) <= 20 else f"{value[:8]}…{value[-8:]}"


def run_text(run: dict[str, Any]) -> dict[str, str]:
    error = run.get("error") or ""
    if error and run.get("error_code"):
        error = f"{run['error_code']}: {error}"
    return {
        "run_id": str(run["run_id"]),
        "plan_name": run["plan_name"],
        "scheduled_for": moment(run["scheduled_for"]),
        "status": run["status"],
        "trigger": run.get("trigger") or "",
        "request_id": short(run.get("request_id")),
        "signature": short(run.get("signature")),
        "error": error,
        "settle": run.get("settle") or "",
    }


def status_text(status: dict[str, Any]) -> dict[str, str]:
    api = status["api"]
    use = f" ({api['use'] * 100:.0f}% of the limit)" if api["use"] is not None else ""
    errors = status["errors_last_hour"]
    return {
        "node": status["node"],
        "role": status["role"],
        "since": moment(status["since"]),
        "started_at": moment(status["started_at"]),
        "version": status["version"],
        "wallet": status["wallet"],
        "dry_run": "ON: orders are checked, never signed" if status["dry_run"] else "off",
        "kill_switch": f"ON: {status['kill_switch']}" if status["kill_switch"] else "off",
        "plans": str(status["plans"]),
        "api": f"{api['requests_last_minute']} requests in the last minute, "
        f"{api['rate']:g}/s of {api['rate_limit']:g}/s{use}",
        "errors": f"{errors['api']} API, {errors['runs']} runs",
        "in_flight": str(len(status["in_flight"])),
        "in_doubt": str(len(status["in_doubt"])),
        "now": moment(status["now"]),
    }

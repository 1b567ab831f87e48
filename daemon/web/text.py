"""The words and numbers the page shows, made once here from a view's data and
sent in its ``text`` map: the server's first render and the script's updates
put the same strings in the same places (the script only assigns textContent).
Every string of a ``text`` map has gone through `jupcron.visible.visible`, as the
CLI's tables: a bidi override (U+202E) or a control character from the API or a
plan shows as a ``\u202e`` escape, never reorders what the page says.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any

from jupcron.plans.apply import FilesState
from jupcron.report.rows import _in_units, _signed
from jupcron.store import tokens
from jupcron.visible import visible

NONE = "-"


def _shown(text: dict[str, str]) -> dict[str, str]:
    return {key: visible(value) for key, value in text.items()}


def moment(value: str | None) -> str:
    """``2026-11-23T10:00:05Z`` -> ``2026-11-23 10:00:05 UTC``."""
    if not value:
        return NONE
    return value.replace("T", " ").replace("Z", " UTC")


def _plain(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _amount(ui: str | None, base: str, symbol: str | None, mint: str | None = None) -> str:
    """``5 USDC``; a mint without a symbol by its short address (as the price names
    it), never a bare number; base units said so where the decimals are unknown."""
    if base == "0":
        return NONE
    label = symbol or (tokens.short(mint) if mint else None)
    if ui is not None:
        return f"{_plain(ui)} {label}" if label else _plain(ui)
    return f"{base} (base units)"


def _price(value: str | None, quote: str | None, base: str | None) -> str:
    """``150.15 USDC per SOL`` (eight significant digits at most)."""
    if not value:
        return NONE
    with localcontext() as ctx:
        ctx.prec = 8
        shown = _plain(format(+Decimal(value), "f"))
    return f"{shown} {quote} per {base}" if quote and base else shown


def _value_now(money: dict[str, Any]) -> str:
    """``149850018.499999 USDC (P&L +12.5 USDC)``: amounts of the quote token, read to
    its own unit (``quote_decimals``) as the report's table reads them (`report.rows`),
    every whole digit kept — eight significant digits showed 149,850,018.499999 USDC
    as 149850020. A view that does not say the unit: eight significant digits, but
    never fewer than the whole digits."""
    quote, decimals = money.get("price_quote"), money.get("quote_decimals")
    value, pnl = money.get("current_value"), money.get("unrealised_pnl")
    if value is None or pnl is None or not money.get("fills"):
        return NONE
    worth, change = Decimal(value), Decimal(pnl)
    if decimals is None:
        sign = "-" if change < 0 else "+"
        return f"{_whole(worth)} {quote} (P&L {sign}{_whole(abs(change))} {quote})"
    unit = tokens.Token(mint="", decimals=int(decimals), symbol=quote, source="page")
    return f"{_in_units(worth, unit)} {quote} (P&L {_signed(change, unit)} {quote})"


def _whole(value: Decimal) -> str:
    with localcontext() as ctx:
        ctx.prec = max(8, value.adjusted() + 1)
        return _plain(format(+value, "f"))


def _money_text(money: dict[str, Any]) -> dict[str, str]:
    quote, base = money.get("price_quote"), money.get("price_base")
    fees = Decimal(money.get("network_fee_sol") or 0) + Decimal(money.get("priority_fee_sol") or 0)
    now = _value_now(money)
    refunded = _amount(money.get("refunded_ui"), money.get("refunded", "0"),
                       money.get("refund_symbol"))  # fmt: skip
    return {
        "refunded": refunded,
        "network_fees": f"{_plain(format(fees, 'f'))} SOL" if fees else NONE,
        "value_now": now,
        "market": _price(money.get("current_price"), quote, base),
        "nofill": f"no fills yet; refunded {refunded}" if refunded != NONE else "no fills yet",
    }


def _other_pairs(money: dict[str, Any]) -> str:
    """The plan's other pairs, each on its own: ``5 USDC → 0.033 SOL (1 fill, 150.6 USDC
    per SOL)``, a row of another wallet than the main row's (the plan moved) led by
    ``[wallet]``; figures of different pairs or wallets are never added together. As
    on the main row, the landed swaps no answer measured are said beside the figures:
    ``5 USDC (+5 USDC unmeasured) → … (1 fill, 1 landed with amounts unknown, …)``."""
    shown = []
    for pair in money.get("other_pairs") or ():
        whose = pair.get("wallet")
        lead = f"[{whose}] " if whose and whose != money.get("wallet") else ""
        spent = _amount(pair.get("spent_ui"), pair.get("spent", "0"), pair.get("input_symbol"),
                        pair.get("input_mint")) + _unmeasured_spent(pair)  # fmt: skip
        got = _amount(pair.get("received_ui"), pair.get("received", "0"),
                      pair.get("output_symbol"), pair.get("output_mint"))  # fmt: skip
        fills = pair.get("fills", 0)
        about = f"{fills} fill{'' if fills == 1 else 's'}"
        if landed := pair.get("unmeasured_runs"):
            about += f", {landed} landed with amounts unknown"
        price = _price(pair.get("average_price"), pair.get("price_quote"), pair.get("price_base"))
        if price != NONE:
            about += f", {price}"
        refunded = _amount(pair.get("refunded_ui"), pair.get("refunded", "0"),
                           pair.get("refund_symbol"))  # fmt: skip
        if refunded != NONE:
            about += f", refunded {refunded}"
        shown.append(f"{lead}{spent} → {got} ({about})")
    return "; ".join(shown) or NONE


def _unmeasured_spent(money: dict[str, Any]) -> str:
    """Beside the measured spend: the input of swaps that landed with no answer to
    measure them (`jupcron.report.unmeasured`), never added to it."""
    if not money.get("unmeasured_runs"):
        return ""
    gave = _amount(money.get("unmeasured_spent_ui"), money.get("unmeasured_spent", "0"),
                   money.get("input_symbol"), money.get("input_mint"))  # fmt: skip
    return f" (+{gave} unmeasured)"


def plan_text(plan: dict[str, Any]) -> dict[str, str]:
    fires = plan["next_fires"]
    money = plan["money"] or {}
    price = money.get("average_price")
    return _shown(
        {
            "name": plan["name"],
            "wallet": plan.get("wallet") or "",
            "description": plan["description"] or "",
            "kind": plan["kind"] + (" (dry run)" if plan["dry_run"] else ""),
            "schedule": plan["schedule"],
            "paused": plan["paused"] or "",
            "next": moment(fires[0]) if fires else "no fire time left",
            "later": ", ".join(moment(f) for f in fires[1:]),
            "last_status": plan["last_status"] or "no run yet",
            "last_when": moment(plan["last_scheduled_for"]) if plan["last_status"] else "",
            "last_error": plan["last_error"] or "",
            "spent": _amount(
                money.get("spent_ui"),
                money.get("spent", "0"),
                money.get("input_symbol"),
                money.get("input_mint"),
            )
            + _unmeasured_spent(money),
            "received": _amount(
                money.get("received_ui"),
                money.get("received", "0"),
                money.get("output_symbol"),
                money.get("output_mint"),
            ),
            "price": _price(price, money.get("price_quote"), money.get("price_base")),
            "fills": str(money.get("fills", 0))
            + (f" (+{n} landed, amounts unknown)" if (n := money.get("unmeasured_runs")) else ""),
            "other_pairs": _other_pairs(money),
            **_money_text(money),
        }
    )


def short(value: str | None) -> str:
    if not value:
        return NONE
    return value if len(value) <= 20 else f"{value[:8]}…{value[-8:]}"


def run_text(run: dict[str, Any]) -> dict[str, str]:
    error = run.get("error") or ""
    if error and run.get("error_code"):
        error = f"{run['error_code']}: {error}"
    return _shown(
        {
            "run_id": str(run["run_id"]),
            "plan_name": run["plan_name"],
            "wallet": run.get("wallet") or "",
            "scheduled_for": moment(run["scheduled_for"]),
            "status": run["status"],
            "trigger": run.get("trigger") or "",
            "request_id": short(run.get("request_id")),
            "signature": short(run.get("signature")),
            "error": error,
            "settle": run.get("settle") or "",
        }
    )


def node_text(node: dict[str, Any]) -> dict[str, str]:
    """One daemon's row: a standby and a daemon that stopped beating say so."""
    if node["running"]:
        role = node["role"]
    else:
        role = f"not running ({node['role']} until its heartbeats stopped)"
    return _shown(
        {
            "node": node["node"],
            "this": "this page's daemon" if node.get("this") else "",
            "role": role,
            "since": moment(node["since"]),
            "started_at": moment(node["started_at"]),
            "last_beat": moment(node["last_beat"]),
            "dry_run": "on" if node["dry_run"] else "off",
            "kill_switch": node["kill_switch"] or "off",
            "version": node["version"],
            "degraded": node.get("degraded") or "",
            "wallets": ", ".join(node["wallets"]) if node.get("wallets") is not None else "",
        }
    )


def pause_text(pause: dict[str, Any]) -> dict[str, str]:
    what, undo = ("all plans", "--all") if pause["all"] else (pause["plan"], pause["plan"])
    return _shown(
        {
            "what": what,
            "reason": pause["reason"] or "no reason given",
            "by": pause["by"],
            "at": moment(pause["at"]),
            "undo": f"jupcron resume {undo}",
        }
    )


def runway_text(runway: dict[str, Any]) -> dict[str, str]:
    """One runway row: the token, its balance (``unknown`` while the API did not
    answer, never 0) and what it covers."""
    symbol = runway["symbol"] or short(runway["mint"])
    if runway["balance"] is None:
        balance = "unknown"
    elif runway["balance_ui"] is not None:
        balance = f"{runway['balance_ui']} {symbol}"
    else:
        balance = f"{runway['balance']} (base units)"
    return _shown(
        {
            "key": f"{runway['wallet']}/{runway['mint']}",
            "wallet": short(runway["wallet"]),
            "token": symbol,
            "balance": balance,
            "runway": runway["summary"],
            "plans": ", ".join(runway["plans"]),
            "checked": moment(runway["checked_at"]),
        }
    )


def _in_effect(value: Any, on: str) -> str:
    if value is None:
        return "unknown: no daemon is running"
    return on if value else "off"


def _kill(status: dict[str, Any]) -> str:
    if status["kill_switch"]:
        return f"ON: {status['kill_switch']}"
    return "off" if status["running"] else "unknown: no daemon is running"


def _paused(pauses: list[dict[str, Any]]) -> str:
    if not pauses:
        return "none"
    every = next((p for p in pauses if p["all"]), None)
    plans = [p["plan"] for p in pauses if not p["all"]]
    parts = [f"ALL PLANS: {every['reason'] or 'no reason given'}"] if every else []
    if plans:
        parts.append(f"{len(plans)} plan{'s' if len(plans) > 1 else ''} by name")
    return "; ".join(parts)


def _plan_files(files: dict[str, Any] | None) -> str:
    """`jupcron status`'s line on plans.dir against the store (the same `FilesState`)."""
    if files is None:
        return "unknown: not compared yet"
    return FilesState(**files).text()


def status_text(status: dict[str, Any]) -> dict[str, str]:
    api = status["api"]
    use = f" ({api['use'] * 100:.0f}% of the limit)" if api["use"] is not None else ""
    errors = status["errors_last_hour"]
    running = [n for n in status["daemons"] if n["running"]]
    daemons = f"{len(running)} running" if running else "none running"
    if status["leader"]:
        daemons += f", leader {status['leader']}"
    tz = status["tzdata"]
    if tz["differ"]:  # one plan's slots can differ between them (`jupcron status` says so too)
        releases = ", ".join(f"{node} {release}" for node, release in tz["nodes"].items())
        daemons += f"; tz data DIFFER: {releases} (this page's {tz['here']})"
    return _shown(
        {
            "node": status["node"],
            "role": status["role"] or "unknown (no heartbeat of this daemon yet)",
            "daemons": daemons,
            "wallet": status["wallet"],
            "dry_run": _in_effect(status["dry_run"], "ON: orders are checked, never signed"),
            "kill_switch": _kill(status),
            "paused": _paused(status["pauses"]),
            "plans": str(status["plans_enabled"]),
            "api": f"{api['requests_last_minute']} requests in the last minute, "
            f"{api['rate']:g}/s of {api['rate_limit']:g}/s{use}",
            "errors": f"{errors['api']} API, {errors['runs']} runs",
            "in_flight": str(status["in_flight_count"]),
            "in_doubt": str(status["in_doubt_count"]),
            "plan_files": _plan_files(status["plan_files"]),
            "degraded": status.get("degraded") or "no",
            "now": moment(status["now"]),
        }
    )

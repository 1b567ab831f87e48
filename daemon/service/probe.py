"""Is everything the daemon depends on there and answering? (`jupcron config check`,
and the daemon's own check at start.)

Each check is one `Check`: ``ok`` (fine), ``warn`` (works, but look: a wallet
without SOL, no RPC node configured) or ``fail`` (a run would fail: exit 1),
with what was found and, on a failure, the fix. The API key is proved by one
cheap authenticated read (the wallet's portfolio); the RPC node by its block
height and the wallet's SOL balance.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx

from jupcron.api.client import JupiterClient
from jupcron.config import Config, api_key
from jupcron.config.trust import kill_switch_problem
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import ApiAuthError, JupcronError, RetryableError
from jupcron.urls import mask_url

Verdict = Literal["ok", "warn", "fail"]
KEY_FIX = (
    "put a valid key in api.key_file (or $JUPITER_API_KEY, or the systemd credential "
    "'api-key'); keys come from https://portal.jup.ag; no key at all is keyless (0.5 requests/s)"
)


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    detail: str
    fix: str = ""
    fatal: bool = False  # the daemon must not start (a key the API refuses)

    def line(self) -> str:
        fix = f" (fix: {self.fix})" if self.fix and self.verdict != "ok" else ""
        return f"{self.verdict:<4}  {self.name:<9} {self.detail}{fix}"


def _guard(name: str, work: Callable[[], Check], fix: str = "") -> Check:
    try:
        return work()
    except JupcronError as exc:
        return Check(name, "fail", str(exc), fix)
    except OSError as exc:
        return Check(name, "fail", f"{exc.filename or ''} {exc.strerror or exc}".strip(), fix)


def check_api(
    config: Config, address: str | None, transport: httpx.BaseTransport | None = None
) -> Check:
    """The key read, then proved by one authenticated read (no retries)."""
    try:
        key = api_key(config)
    except JupcronError as exc:
        return Check("api key", "fail", str(exc), KEY_FIX, fatal=True)
    keyed = "keyless" if key is None else "key read"
    one_try = config.model_copy(update={"api": config.api.model_copy(update={"max_attempts": 1})})
    client = JupiterClient.from_config(one_try, key, transport=transport)
    where = mask_url(config.api.base_url)
    try:
        client.positions(address or "11111111111111111111111111111111")
    except ApiAuthError as exc:
        return Check("api key", "fail", f"{where} refused it: {exc}", KEY_FIX, fatal=True)
    except RetryableError as exc:
        return Check("api key", "fail", f"{where} did not answer: {exc}",
                     "check api.base_url and the network (the daemon starts degraded)")  # fmt: skip
    except JupcronError:
        pass  # any other answer (a 4xx for this address, say) proves the key was accepted
    finally:
        client.close()
    return Check("api key", "ok", f"{keyed}, accepted by {where}")


def check_rpc(config: Config, wallets: str | Mapping[str, str] | None) -> Check:
    """The RPC node, and the SOL of `wallets` (an address, or addresses by wallet name)."""
    from jupcron.chain.rpc import rpc_from_config

    rpc = rpc_from_config(config.rpc)
    if rpc is None:
        return Check("rpc", "warn", "rpc.url not set: no on-chain settling, simulation, mint "
                     "or balance checks", "set rpc.url")  # fmt: skip
    where = mask_url(config.rpc.url or "")
    named = {DEFAULT_WALLET: wallets} if isinstance(wallets, str) else dict(wallets or {})
    try:
        height = rpc.block_height()
        if not named:
            return Check("rpc", "ok", f"{where} at block height {height}")
        accounts = rpc.accounts(list(named.values()))
    except JupcronError as exc:
        return Check("rpc", "fail", f"{where} did not answer: {exc}", "check rpc.url")
    finally:
        rpc.close()
    held = {n: a.lamports if a is not None else 0 for n, a in zip(named, accounts, strict=True)}
    one = isinstance(wallets, str)
    empty = [name for name, lamports in held.items() if lamports == 0]
    if empty:
        which = named[empty[0]] if one else ", ".join(f"{n} ({named[n]})" for n in empty)
        return Check("rpc", "warn", f"{where} answers; wallet {which} holds no SOL: "
                     "nothing can pay fees", "fund the wallet")  # fmt: skip
    if one:
        sol = held[DEFAULT_WALLET] / 1e9
        return Check("rpc", "ok", f"{where} answers; wallet holds {sol:.4f} SOL")
    shown = ", ".join(f"{name} {lamports / 1e9:.4f}" for name, lamports in held.items())
    return Check("rpc", "ok", f"{where} answers; SOL held: {shown}")


def metrics_check(config: Config) -> Check:
    """``metrics.listen`` as the daemon reads it at start (`parse_listen`): one it cannot
    use passed the check, and `jupcron run` then refused it after its probes, the store
    and the leader lock."""
    from jupcron.listen.server import parse_listen

    if not config.metrics.listen:
        return Check("metrics", "ok", "off (metrics.listen not set)")
    parse_listen(config.metrics.listen)
    return Check("metrics", "ok", config.metrics.listen)


def check_all(
    config: Config,
    transport: httpx.BaseTransport | None = None,
    *,
    web: Callable[[], Check] | None = None,
) -> list[Check]:
    """Every check, in the order an operator fixes things; `web`, the page's (its
    settings are daemon/web's, which this package does not import)."""
    from jupcron.chain.wallets import load_wallets
    from jupcron.plans.load import load_plans
    from jupcron.store.handle import open_store

    checks: list[Check] = [Check("config", "ok", config.source or "(built-in defaults)")]
    addresses: dict[str, str] = {}

    def wallet() -> Check:
        addresses.update({n: w.address for n, w in load_wallets(config).items()})
        if list(addresses) == [DEFAULT_WALLET]:
            return Check("wallet", "ok", addresses[DEFAULT_WALLET])
        return Check("wallet", "ok", ", ".join(f"{n} {a}" for n, a in addresses.items()))

    def plans() -> Check:
        folder = config.plans.dir
        if not folder.is_dir():
            return Check("plans", "fail", f"{folder}: no such folder", "set plans.dir")
        loaded = load_plans([folder], config.wallet_names())
        if loaded.problems:
            first = "; ".join(str(p) for p in loaded.problems[:3])
            return Check("plans", "fail", f"{len(loaded.problems)} problem(s): {first}",
                         "jupcron plans validate")  # fmt: skip
        return Check("plans", "ok", f"{len(loaded.plans)} plan(s) in {folder}")

    def database() -> Check:
        open_store(config).close()
        return Check("database", "ok", mask_url(config.database.url))

    def notify() -> Check:
        urls = [u.get_secret_value() for u in config.notify.urls]
        if not urls and not config.notify.webhook_url:
            return Check("notify", "warn", "no notify.urls: nobody is told of failures",
                         "add notify.urls (docs/notify.md)")  # fmt: skip
        from jupcron.service.apprise_channel import channel_of, check_urls

        check_urls(urls)
        shown = [channel_of(u) for u in urls] + (["webhook"] if config.notify.webhook_url else [])
        return Check("notify", "ok", ", ".join(shown))

    checks.append(_guard("wallet", wallet, "check wallet.keypair and wallets:"))
    checks.append(_guard("plans", plans, "jupcron plans validate"))
    checks.append(_guard("database", database, "check database.url; jupcron db upgrade"))
    first = next(iter(addresses.values()), None)
    checks.append(check_api(config, first, transport))
    single = list(addresses) == [DEFAULT_WALLET]
    checks.append(check_rpc(config, first if single else addresses))
    checks.append(_guard("notify", notify, "fix notify.urls"))
    checks.append(_guard("metrics", lambda: metrics_check(config), "fix metrics.listen"))
    if web is not None:
        checks.append(_guard("web", web, "fix web.listen / web.token_file"))
    switch = config.safety.kill_switch_file
    problem = None if switch is None else kill_switch_problem(switch)
    if switch is not None and problem is not None:
        folder = Path(os.path.abspath(switch)).parent
        checks.append(Check("kill switch", "warn", problem,
                            f"chmod go-w {folder}, or keep safety.kill_switch_file in "
                            "a folder only jupcron's user and root may write"))  # fmt: skip
    return checks

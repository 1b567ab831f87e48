"""The minimal client: the same HTTP calls and the same signing as a jupcron
swap run, with httpx and solders in a loop. No store, no scheduler, no guard,
no retries. The yardstick for jupcron's throughput and CPU per run.

    python -m tests.bench.minimal_client URL KEYPAIR RUNS [--threads N] [--kind K]

``--kind ultra`` (default): Ultra's order and execute; ``--kind swap``: Swap V2's
(the default ``api.swap_api``); ``--kind recurring``:
Recurring's createOrder and execute (the plan of ``harness.recurring_plan``).

Prints one JSON line: runs, ok, seconds (wall, loop only), cpu (process CPU
seconds spent in the loop).
"""

from __future__ import annotations

import argparse
import base64
import json
import threading
import time
from pathlib import Path

import httpx
from solders.keypair import Keypair
from solders.message import to_bytes_versioned
from solders.transaction import VersionedTransaction

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def one_run(http: httpx.Client, keypair: Keypair, prefix: str = "/ultra/v1") -> bool:
    params = {
        "inputMint": USDC,
        "outputMint": SOL,
        "amount": "1000000",
        "taker": str(keypair.pubkey()),
    }
    if prefix == "/swap/v2":  # the config's default api.exclude_routers, as the daemon sends
        params["excludeRouters"] = "dflow,okx"
    order = http.get(f"{prefix}/order", params=params).json()
    unsigned = VersionedTransaction.from_bytes(base64.b64decode(order["transaction"]))
    signature = keypair.sign_message(to_bytes_versioned(unsigned.message))
    signed = VersionedTransaction.populate(unsigned.message, [signature])
    body = {
        "signedTransaction": base64.b64encode(bytes(signed)).decode(),
        "requestId": order["requestId"],
    }
    if order.get("lastValidBlockHeight") is not None:
        body["lastValidBlockHeight"] = str(order["lastValidBlockHeight"])
    answer = http.post(f"{prefix}/execute", json=body).json()
    return bool(answer.get("status") == "Success")


# the body of harness.recurring_plan's request (without `user`)
RECURRING = {
    "inputMint": USDC,
    "outputMint": SOL,
    "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 2, "interval": 86_400}},
}


def one_recurring(http: httpx.Client, keypair: Keypair) -> bool:
    order = http.post(
        "/recurring/v1/createOrder", json={**RECURRING, "user": str(keypair.pubkey())}
    ).json()
    unsigned = VersionedTransaction.from_bytes(base64.b64decode(order["transaction"]))
    signature = keypair.sign_message(to_bytes_versioned(unsigned.message))
    signed = VersionedTransaction.populate(unsigned.message, [signature])
    body = {
        "signedTransaction": base64.b64encode(bytes(signed)).decode(),
        "requestId": order["requestId"],
    }
    answer = http.post("/recurring/v1/execute", json=body).json()
    return bool(answer.get("status") == "Success")


def one_swap_v2(http: httpx.Client, keypair: Keypair) -> bool:
    return one_run(http, keypair, "/swap/v2")


# swap: Swap V2, what a swap plan uses under the config's default api.swap_api
KINDS = {"ultra": one_run, "swap": one_swap_v2, "recurring": one_recurring}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("keypair", type=Path)
    parser.add_argument("runs", type=int)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--kind", choices=sorted(KINDS), default="ultra")
    args = parser.parse_args()
    keypair = Keypair.from_bytes(bytes(json.loads(args.keypair.read_text())))
    run_one = KINDS[args.kind]
    left = args.runs
    ok = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal left, ok
        with httpx.Client(base_url=args.url, timeout=30) as http:
            while True:
                with lock:
                    if left <= 0:
                        return
                    left -= 1
                good = run_one(http, keypair)
                with lock:
                    ok += good

    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    cpu0, wall0 = time.process_time(), time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    print(json.dumps({"runs": args.runs, "ok": ok, "seconds": wall, "cpu": cpu}))


if __name__ == "__main__":
    main()

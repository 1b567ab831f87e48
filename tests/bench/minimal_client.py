"""The minimal client: the same HTTP calls and the same signing as a jupcron
swap run, with httpx and solders in a loop. No store, no scheduler, no guard,
no retries. The yardstick for jupcron's throughput and CPU per run.

    python -m tests.bench.minimal_client URL KEYPAIR RUNS [--threads N]

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


def one_run(http: httpx.Client, keypair: Keypair) -> bool:
    params = {
        "inputMint": USDC,
        "outputMint": SOL,
        "amount": "1000000",
        "taker": str(keypair.pubkey()),
    }
    order = http.get("/ultra/v1/order", params=params).json()
    unsigned = VersionedTransaction.from_bytes(base64.b64decode(order["transaction"]))
    signature = keypair.sign_message(to_bytes_versioned(unsigned.message))
    signed = VersionedTransaction.populate(unsigned.message, [signature])
    body = {
        "signedTransaction": base64.b64encode(bytes(signed)).decode(),
        "requestId": order["requestId"],
    }
    answer = http.post("/ultra/v1/execute", json=body).json()
    return bool(answer.get("status") == "Success")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("keypair", type=Path)
    parser.add_argument("runs", type=int)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    keypair = Keypair.from_bytes(bytes(json.loads(args.keypair.read_text())))
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
                good = one_run(http, keypair)
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

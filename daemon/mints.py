"""The well-known mints: their addresses, symbols and decimals (a mint's decimals never
change). Kept short on purpose: a wrong entry would move a limit by powers of ten; any
other mint's decimals are read from the chain (`SolanaRpc.mint_decimals`)."""

from __future__ import annotations

SOL_MINT = "So11111111111111111111111111111111111111112"  # native SOL / wSOL: lamports
USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
USDT_MINT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
JUP_MINT = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"

# mint -> (symbol, decimals)
KNOWN_MINTS: dict[str, tuple[str, int]] = {
    SOL_MINT: ("SOL", 9),
    USDC_MINT: ("USDC", 6),
    USDT_MINT: ("USDT", 6),
    JUP_MINT: ("JUP", 6),
}
SYMBOLS: dict[str, str] = {symbol.upper(): mint for mint, (symbol, _) in KNOWN_MINTS.items()}
# the stablecoins among them (the offline minimums count them as dollars)
STABLECOINS: dict[str, tuple[str, int]] = {m: KNOWN_MINTS[m] for m in (USDC_MINT, USDT_MINT)}

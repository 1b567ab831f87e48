"""Solana itself: the keypair and signing (wallet), the JSON-RPC client (rpc)."""

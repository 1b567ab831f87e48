"""The emulator's Trigger V2 (the twin of `jupcron.products.trigger_v2`)."""

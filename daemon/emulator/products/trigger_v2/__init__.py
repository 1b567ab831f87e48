"""The emulator's Trigger V2 (the twin of `daemon.products.trigger_v2`)."""

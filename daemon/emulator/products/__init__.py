"""The emulator's side of each product, named as in `jupcron.products`: recurring,
trigger (v1 cancel), swap (Swap V2 and Ultra v1), trigger_v2."""

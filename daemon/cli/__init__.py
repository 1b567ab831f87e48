"""The `jupcron` command line: one module per command group."""

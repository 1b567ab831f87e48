"""`jupcron demo`: the whole product on SQLite, the emulator and a throwaway keypair."""

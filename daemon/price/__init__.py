"""Price protection (docs/price-protection.md): a plan's price limits (`limits`),
an on-chain reference price (`oracle`, `reference`) and, for the runner and
txguard, a run's protection in one value (`protection.protection_for`).

Nothing is imported here: `jupcron.plans.schema` imports `limits`, and
`protection` imports the schema."""

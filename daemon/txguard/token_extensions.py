"""Token-2022's extension instructions: one tag, then a sub-instruction byte.

Transcribed from the program's published interface (the Codama IDL `idl.json`
of github.com/solana-program/token-2022 at 426400f2, whose instruction enums
live in `interface/src/extension/*/instruction.rs`); the same facts are in
tests/fixtures/interfaces/token_2022.json and test_txguard_interfaces.py holds
this table to them. A sub-instruction that is not listed is unknown: decoding
refuses it, it is never guessed.

Each entry: name, account roles in order, the index of the authorising
account (multisig co-signers follow it) or None, what it does to value, and
the arguments decoded after the two tag bytes (u64 amounts, u8 decimals and
counts). Roles use txguard's words where a rule reads them (`source`,
`destination`, `account`, `authority`, `mint`); other accounts keep the
interface's names.
"""

from __future__ import annotations

# what an instruction does to value: the values of `jupcron.txguard.token.Effect`
BURNS, EXTENSION, MOVES, WITHDRAWS = "burns", "extension", "moves", "withdraws"

# (tag, sub) -> (name, roles in order, authority index, effect, argument names)
SUB_INSTRUCTIONS: dict[tuple[int, int], tuple[str, str, int | None, str, str]] = {
    (26, 0): ("initialize_transfer_fee_config", "mint", None, EXTENSION, ""),
    (26, 1): (
        "transfer_checked_with_fee",
        "source mint destination authority",
        3,
        MOVES,
        "amount decimals fee",
    ),
    (26, 2): ("withdraw_withheld_tokens_from_mint", "mint destination authority", 2, WITHDRAWS, ""),
    (26, 3): (
        "withdraw_withheld_tokens_from_accounts",
        "mint destination authority",
        2,
        WITHDRAWS,
        "num_token_accounts",
    ),
    (26, 4): ("harvest_withheld_tokens_to_mint", "mint", None, EXTENSION, ""),
    (26, 5): ("set_transfer_fee", "mint authority", 1, EXTENSION, ""),
    (27, 0): ("initialize_confidential_transfer_mint", "mint", None, EXTENSION, ""),
    (27, 1): ("update_confidential_transfer_mint", "mint authority", None, EXTENSION, ""),
    (27, 2): (
        "configure_confidential_transfer_account",
        "account mint instructions_sysvar_or_context_state authority",
        3,
        EXTENSION,
        "",
    ),
    (27, 3): (
        "approve_confidential_transfer_account",
        "account mint authority",
        None,
        EXTENSION,
        "",
    ),
    (27, 4): (
        "empty_confidential_transfer_account",
        "account instructions_sysvar_or_context_state authority",
        2,
        EXTENSION,
        "",
    ),
    (27, 5): ("confidential_deposit", "account mint authority", 2, EXTENSION, ""),
    (27, 6): (
        "confidential_withdraw",
        "account mint instructions_sysvar equality_record range_record authority",
        5,
        EXTENSION,
        "",
    ),
    (27, 7): (
        "confidential_transfer",
        "source mint destination instructions_sysvar "
        "equality_record ciphertext_validity_record range_record authority",
        7,
        EXTENSION,
        "",
    ),
    (27, 8): ("apply_confidential_pending_balance", "account authority", 1, EXTENSION, ""),
    (27, 9): ("enable_confidential_credits", "account authority", 1, EXTENSION, ""),
    (27, 10): ("disable_confidential_credits", "account authority", 1, EXTENSION, ""),
    (27, 11): ("enable_non_confidential_credits", "account authority", 1, EXTENSION, ""),
    (27, 12): ("disable_non_confidential_credits", "account authority", 1, EXTENSION, ""),
    (27, 13): (
        "confidential_transfer_with_fee",
        "source mint destination instructions_sysvar equality_record "
        "transfer_amount_ciphertext_validity_record fee_sigma_record "
        "fee_ciphertext_validity_record range_record authority",
        9,
        EXTENSION,
        "",
    ),
    (27, 14): (
        "configure_confidential_transfer_account_with_registry",
        "account mint elgamal_registry payer system",
        None,
        EXTENSION,
        "",
    ),
    (28, 0): ("initialize_default_account_state", "mint", None, EXTENSION, ""),
    (28, 1): ("update_default_account_state", "mint authority", 1, EXTENSION, ""),
    (30, 0): ("enable_memo_transfers", "account authority", 1, EXTENSION, ""),
    (30, 1): ("disable_memo_transfers", "account authority", 1, EXTENSION, ""),
    (33, 0): ("initialize_interest_bearing_mint", "mint", None, EXTENSION, ""),
    (33, 1): ("update_rate_interest_bearing_mint", "mint authority", 1, EXTENSION, ""),
    (34, 0): ("enable_cpi_guard", "account authority", 1, EXTENSION, ""),
    (34, 1): ("disable_cpi_guard", "account authority", 1, EXTENSION, ""),
    (36, 0): ("initialize_transfer_hook", "mint", None, EXTENSION, ""),
    (36, 1): ("update_transfer_hook", "mint authority", 1, EXTENSION, ""),
    (37, 0): ("initialize_confidential_transfer_fee", "mint", None, EXTENSION, ""),
    (37, 1): (
        "withdraw_withheld_tokens_from_mint_for_confidential_transfer_fee",
        "mint destination instructions_sysvar_or_context_state authority",
        3,
        WITHDRAWS,
        "",
    ),
    (37, 2): (
        "withdraw_withheld_tokens_from_accounts_for_confidential_transfer_fee",
        "mint destination instructions_sysvar_or_context_state authority",
        3,
        WITHDRAWS,
        "num_token_accounts",
    ),
    (37, 3): (
        "harvest_withheld_tokens_to_mint_for_confidential_transfer_fee",
        "mint",
        None,
        EXTENSION,
        "",
    ),
    (37, 4): ("enable_harvest_to_mint", "mint authority", 1, EXTENSION, ""),
    (37, 5): ("disable_harvest_to_mint", "mint authority", 1, EXTENSION, ""),
    (39, 0): ("initialize_metadata_pointer", "mint", None, EXTENSION, ""),
    (39, 1): ("update_metadata_pointer", "mint authority", 1, EXTENSION, ""),
    (40, 0): ("initialize_group_pointer", "mint", None, EXTENSION, ""),
    (40, 1): ("update_group_pointer", "mint authority", 1, EXTENSION, ""),
    (41, 0): ("initialize_group_member_pointer", "mint", None, EXTENSION, ""),
    (41, 1): ("update_group_member_pointer", "mint authority", 1, EXTENSION, ""),
    (42, 0): ("initialize_confidential_mint_burn", "mint", None, EXTENSION, ""),
    (42, 1): (
        "rotate_supply_elgamal_pubkey",
        "mint instructions_sysvar_or_context_state authority",
        2,
        EXTENSION,
        "",
    ),
    (42, 2): (
        "update_confidential_mint_burn_decryptable_supply",
        "mint authority",
        1,
        EXTENSION,
        "",
    ),
    (42, 3): (
        "confidential_mint",
        "account mint instructions_sysvar "
        "equality_record ciphertext_validity_record range_record authority",
        6,
        EXTENSION,
        "",
    ),
    (42, 4): (
        "confidential_burn",
        "account mint instructions_sysvar "
        "equality_record ciphertext_validity_record range_record authority",
        6,
        EXTENSION,
        "",
    ),
    (42, 5): ("apply_confidential_pending_burn", "mint authority", 1, EXTENSION, ""),
    (43, 0): ("initialize_scaled_ui_amount_mint", "mint", None, EXTENSION, ""),
    (43, 1): ("update_multiplier_scaled_ui_mint", "mint authority", 1, EXTENSION, ""),
    (44, 0): ("initialize_pausable_config", "mint", None, EXTENSION, ""),
    (44, 1): ("pause", "mint authority", 1, EXTENSION, ""),
    (44, 2): ("resume", "mint authority", 1, EXTENSION, ""),
    (46, 0): ("initialize_permissioned_burn", "mint", None, EXTENSION, ""),
    (46, 1): (
        "permissioned_burn",
        "account mint permissioned_burn_authority authority",
        3,
        BURNS,
        "amount",
    ),
    (46, 2): (
        "permissioned_burn_checked",
        "account mint permissioned_burn_authority authority",
        3,
        BURNS,
        "amount decimals",
    ),
    (46, 3): (
        "permissioned_confidential_burn",
        "account mint instructions_sysvar equality_record "
        "ciphertext_validity_record range_record permissioned_burn_authority authority",
        7,
        EXTENSION,
        "",
    ),
}

# the extension families, by tag: what `reason` texts call them
FAMILIES: dict[int, str] = {
    26: "transfer_fee_extension",
    27: "confidential_transfer_extension",
    28: "default_account_state_extension",
    30: "memo_transfer_extension",
    33: "interest_bearing_mint_extension",
    34: "cpi_guard_extension",
    36: "transfer_hook_extension",
    37: "confidential_transfer_fee_extension",
    39: "metadata_pointer_extension",
    40: "group_pointer_extension",
    41: "group_member_pointer_extension",
    42: "confidential_mint_burn_extension",
    43: "scaled_ui_amount_extension",
    44: "pausable_extension",
    46: "permissioned_burn_extension",
}

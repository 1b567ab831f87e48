"""runs.owner: the keypair (its base58 address) a run is for, written when it is
claimed, so that a `safety.caps` budget follows the keypair rather than the wallet's
configured name (``runs.wallet``): renaming a wallet no longer restarts its windows.
Runs stored before this have no owner (NULL): they count under their name, as before.

Revision ID: 0013_run_owner
Revises: 0012_plan_files
Create Date: 2026-11-28 07:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_run_owner"
down_revision = "0012_plan_files"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ALTER TABLE … ADD COLUMN on SQLite too: the audit and fills views name their
    # columns, so they stay as they are, and the table is not copied
    with op.batch_alter_table("runs", recreate="never") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", recreate="never") as batch:
        batch.drop_column("owner")

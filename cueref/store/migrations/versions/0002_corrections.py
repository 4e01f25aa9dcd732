"""Corrections: a reviewer's overrides and answers, and the revision of the calls that is current.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0002"
down_revision: Union[str, Sequence[str], None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("revision", sa.Integer, nullable=False, server_default="0"))
    op.create_table(
        "corrections",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("match_id", sa.Integer, sa.ForeignKey("matches.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("shot", sa.Integer, nullable=False),
        sa.Column("event", JSON, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("author", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("automatic", JSON, nullable=False),
        sa.Column("corrected", JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("corrections")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("revision")

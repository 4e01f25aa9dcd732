"""The first match store: matches, players, frames, shots, events and decisions.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0001"
down_revision: Union[str, Sequence[str], None] = None
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def _match_fk() -> sa.Column:
    return sa.Column("match_id", sa.Integer, sa.ForeignKey("matches.id", ondelete="CASCADE"), nullable=False, index=True)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("video_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("video_path", sa.Text, nullable=False),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("profile", sa.String(200), nullable=False),
        sa.Column("options", JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("played_at", TS, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("annotated_video", sa.Text, nullable=True),
    )
    op.create_table(
        "match_players",
        sa.Column("match_id", sa.Integer, sa.ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column("player_id", sa.Integer, sa.ForeignKey("players.id"), nullable=False),
    )
    op.create_table(
        "frames",
        sa.Column("id", sa.Integer, primary_key=True),
        _match_fk(),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("first_shot", sa.Integer, nullable=False),
        sa.Column("last_shot", sa.Integer, nullable=False),
        sa.Column("t_start_s", sa.Float, nullable=False),
        sa.Column("t_end_s", sa.Float, nullable=False),
        sa.Column("breaker", sa.String(200), nullable=True),
        sa.Column("winner", sa.String(200), nullable=True),
        sa.UniqueConstraint("match_id", "number"),
    )
    op.create_table(
        "shots",
        sa.Column("id", sa.Integer, primary_key=True),
        _match_fk(),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("frame_number", sa.Integer, nullable=False),
        sa.Column("player", sa.String(200), nullable=True),
        sa.Column("struck", sa.String(40), nullable=False),
        sa.Column("t_start_s", sa.Float, nullable=False),
        sa.Column("t_end_s", sa.Float, nullable=True),
        sa.Column("first_seq", sa.Integer, nullable=False),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("tracks", sa.LargeBinary, nullable=True),
        sa.UniqueConstraint("match_id", "number"),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True),
        _match_fk(),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("shot", sa.Integer, nullable=True),
        sa.Column("t_s", sa.Float, nullable=False),
        sa.Column("kind", sa.String(40), nullable=False, index=True),
        sa.Column("data", JSON, nullable=False),
        sa.UniqueConstraint("match_id", "seq"),
    )
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer, primary_key=True),
        _match_fk(),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("shot", sa.Integer, nullable=True),
        sa.Column("t_s", sa.Float, nullable=False),
        sa.Column("player", sa.String(200), nullable=True),
        sa.Column("pending", sa.Boolean, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.UniqueConstraint("match_id", "revision", "seq"),
    )


def downgrade() -> None:
    for table in ("decisions", "events", "shots", "frames", "match_players", "matches", "players"):
        op.drop_table(table)

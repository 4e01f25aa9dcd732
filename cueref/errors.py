"""The error the command line shows as one line, without a traceback."""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(Exception):
    """An error whose message is the whole story for the user: what is wrong and what to do."""

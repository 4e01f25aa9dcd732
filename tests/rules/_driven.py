"""The one piece every test driver shares: a :class:`rules.base.Referee` whose state a test may read
or set (a position in the middle of a frame)."""

from __future__ import annotations

from typing import Any

from rules.base import Referee


class Driven:
    """A test driver playing through ``self.referee``."""

    referee: Referee

    @property
    def state(self) -> Any:
        return self.referee.state

    @state.setter
    def state(self, value: Any) -> None:
        self.referee.state = value

    @property
    def pending(self):
        return self.referee.pending

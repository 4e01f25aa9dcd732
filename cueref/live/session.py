"""One live match: the frames go through the pipeline continuously, each result goes to every consumer
(the run's files, the terminal, the board the console and the scoreboard show, the announcer, the
match store), and the operator's inputs go in through :meth:`LiveSession.submit`.

::

    session = LiveSession(source, stages, game="ficha", profile=profile, players=("Ana", "Bia"),
                          consumers=[files, printer])
    server = LiveServer(session).start()          # the console and the scoreboard (cueref.live.server)
    session.run()                                 # until the source ends or session.stop()

:meth:`run` blocks: call it in the thread that should do the refereeing work. Every consumer has
``add(result)``. The board takes each result first and the viewers are told at once, so a call reaches
the console before the slower consumers (the store's transaction) have written it; they follow within
the same frame.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import subprocess
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from calibration.table import TableProfile
from cueref.errors import UserError
from cueref.live.board import INPUTS, Board, spoken
from cueref.pipeline import FrameResult, LiveInputs, PipelineConfig, SourceGap, Stages, run
from cueref.video import Frame
from tracking.events import Answer, Event, Nomination, OperatorInput, UndoCall, event_from_dict

__all__ = ["InputError", "LiveSession", "Announcer"]

log = logging.getLogger(__name__)

BALLS_HZ = 15.0  # how often the table diagram is sent while nothing else changes
LIVE = PipelineConfig(queue_frames=0, eager=True, assume_answers=False)  # the source reads in its own thread; each result is given at once


class InputError(ValueError):
    """An operator input the session refuses before it reaches the referee: the message says why."""


class LiveSession:
    """The pipeline run live (see the module docstring). ``frames`` is a :class:`~cueref.live.source.LiveSource`
    or any iterable of frames and gaps; its ``close()``, if it has one, is how :meth:`stop` ends the run.
    The pipeline runs eager (``PipelineConfig.eager``) and without a decoding thread of its own."""

    def __init__(self, frames: Iterable[Frame | SourceGap], stages: Stages, *, game: str, profile: TableProfile,
                 players: Sequence[str], consumers: Sequence[Any] = (), calls: Sequence[Event] = ()):
        if game not in INPUTS:
            raise UserError(f"no live console for the game {game!r}; the games are {', '.join(INPUTS)}")
        self.frames, self.stages, self.calls = frames, stages, calls
        self.game, self.profile, self.players = game, profile, tuple(players)
        self.inputs = LiveInputs()
        self.board = Board(game, profile, players, stages.referee)
        self.consumers = list(consumers)
        self.listeners: list[Callable[[], None]] = []  # told when the board has news for the viewers (from run's thread)
        self._stop = threading.Event()
        self._kinds = {cls.kind: cls for cls in INPUTS[game]}

    # -- operator inputs

    def submit(self, data: Mapping[str, Any]) -> OperatorInput:
        """Check an operator input (a JSON object in the event-log format, without ``t_s``) and queue it
        for the referee; it enters the log with the frame it arrives at. Raises :class:`InputError`."""
        kind = data.get("kind")
        if kind not in self._kinds:
            raise InputError(f"{kind!r} is not an input of {self.game}: the console offers {', '.join(self._kinds)}")
        try:
            event = event_from_dict({**{k: v for k, v in data.items() if k != "t_s"}, "t_s": 0.0})
        except ValueError as e:
            raise InputError(str(e)) from None
        self._check(event)
        self.inputs.put(event)
        log.info("operator input queued: %s", data)
        return event

    def undo(self, reason: str) -> None:
        """Queue the undo of the referee's last call (:meth:`rules.base.Referee.undo`); it takes effect
        where it falls in the log, as an input does. Raises :class:`InputError` with no reason or no call."""
        if not isinstance(reason, str) or not reason.strip():
            raise InputError("undo: give the reason (it is recorded with the match)")
        if not self.stages.referee.history:
            raise InputError("undo: there is no call to undo yet")
        self.inputs.put(UndoCall(t_s=0.0, reason=reason.strip()))
        log.info("undo queued: %s", reason)

    def _check(self, e: OperatorInput) -> None:
        snap = self.board.snapshot()
        player = getattr(e, "player", None)
        if player is not None and player not in self.players and player not in snap["score"].get("sides", ()):
            raise InputError(f"{e.kind}: {player!r} is not playing; the players are {', '.join(self.players)}")
        if isinstance(e, Answer):
            q = snap["pending"]
            if q is None:
                raise InputError("answer: no question is pending")
            if e.question != q["id"]:
                raise InputError(f"answer: the pending question is {q['id']!r} ({q['text']}), not {e.question!r}")
            if e.answer not in q["options"]:
                raise InputError(f"answer: {e.answer!r} does not answer {q['text']!r}; answer one of {', '.join(q['options'])}")
        if isinstance(e, Nomination):
            if e.ball not in snap["on_table"]:
                raise InputError(f"nomination: {e.ball!r} is not an object ball on the table ({', '.join(snap['on_table'])})")
            pockets = [p.id for p in self.profile.pockets]
            if e.pocket not in pockets:
                raise InputError(f"nomination: {e.pocket!r} is not a pocket of this table ({', '.join(pockets)})")

    # -- the run

    def _frames(self) -> Iterable[Frame | SourceGap]:
        for item in self.frames:
            yield item
            if self._stop.is_set():
                return

    def run(self) -> None:
        """Referee until the source ends or :meth:`stop`; every result goes to the board, then to every
        consumer."""
        seen, sent_s = -1, 0.0
        with contextlib.closing(run(self._frames(), self.stages, self.calls, LIVE, self.inputs)) as results:
            for result in results:
                self.board.add(result)
                now = time.monotonic()
                if self.board.version != seen or now - sent_s >= 1.0 / BALLS_HZ:
                    seen, sent_s = self.board.version, now
                    for notify in self.listeners:
                        notify()
                for consumer in self.consumers:
                    consumer.add(result)

    def stop(self) -> None:
        """End the run: the source is closed, the pipeline finishes as at the end of a video."""
        self._stop.set()
        close = getattr(self.frames, "close", None)
        if close is not None:
            close()


class Announcer:
    """Speaks each call aloud with ``espeak-ng`` (a consumer): the call without its rule numbers, or the
    referee's question. A call that comes while the last is still spoken cuts it short."""

    def __init__(self, program: str = "espeak-ng", voice: str | None = None):
        path = shutil.which(program)
        if path is None:
            raise UserError(f"--speak needs {program}, which is not installed here: install it (Debian: apt install "
                            f"espeak-ng), or leave --speak out and turn on the console's chime instead")
        self.command = [path, *(["-v", voice] if voice else [])]
        self._speaking: subprocess.Popen | None = None
        self.said: list[str] = []

    def add(self, result: FrameResult) -> None:
        for step in result.steps:
            self.say(spoken(step.decision))

    def say(self, text: str) -> None:
        if self._speaking is not None and self._speaking.poll() is None:
            self._speaking.terminate()
        self.said.append(text)
        self._speaking = subprocess.Popen([*self.command, text], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

"""What a referee run prints as it goes: for each shot, what happened and the call, a consumer of
:func:`cueref.pipeline.run`::

    shot 3 at 20.86 s: cue struck; cue hits r3 (21.30 s); r3 into TL (21.84 s); cue off T1; at rest 24.12 s
       20.86s shot   3 A: ficha 4.2, 4.2.1: legal shot, first contact r3; potted r3; A continues
"""

from __future__ import annotations

from typing import Any, Callable

from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    BallPlaced,
    BallRemoved,
    BallTouched,
    CueContact,
    Event,
    Jump,
    OffTable,
    OperatorInput,
    PinDown,
    PinMoved,
    Pot,
    Returned,
    ShotStart,
    Unobserved,
)

__all__ = ["describe", "ShotPrinter"]

UNSURE = 0.9  # events less sure than this show their confidence


def describe(e: Event) -> str:
    """A few words for one event (``cue hits r2 (1.73 s)``); events less sure than :data:`UNSURE`
    carry their confidence."""
    at = f"{e.t_s:.2f} s"
    if isinstance(e, ShotStart):
        text = f"{e.ball} struck"
    elif isinstance(e, BallBall):
        text = f"{e.a} hits {e.b} ({at})"
    elif isinstance(e, BallCushion):
        text = f"{e.ball} off {e.cushion}"
    elif isinstance(e, Pot):
        text = f"{e.ball} into {e.pocket} ({at})"
    elif isinstance(e, (OffTable, Returned, Jump, BallPlaced, BallRemoved, BallTouched, CueContact)):
        verb = {OffTable: "leaves the table", Returned: "comes back", Jump: "jumps", BallPlaced: "placed",
                BallRemoved: "removed", BallTouched: "touched", CueContact: "hit by the cue again"}[type(e)]
        text = f"{e.ball} {verb} ({at})"
    elif isinstance(e, (PinDown, PinMoved)):
        text = f"pin {e.pin} {'down' if isinstance(e, PinDown) else 'moved'} ({at})"
    elif isinstance(e, AtRest):
        text = f"at rest {at}"
    elif isinstance(e, Unobserved):
        text = f"unseen {e.t_s:.2f}-{e.until_s:.2f} s"
    else:
        text = f"{e.kind} ({at})"
    return text if e.confidence >= UNSURE else f"{text} [{e.confidence:.2f} sure]"


class ShotPrinter:
    """Prints each shot's events and its call when the call is made (and each operator call's decision,
    pending questions and refusals) through ``write`` (``tqdm.write`` keeps them above a progress bar).

    Shots are told apart by counting ``shot_start`` events, as the referee numbers them; only the
    shots not yet called are kept."""

    def __init__(self, write: Callable[[str], Any] = print):
        self.write = write
        self.shots: dict[int, list[Event]] = {}
        self.started = 0
        self.n_shots = self.n_pending = 0

    def add(self, result: Any) -> None:
        for e in result.events:
            if isinstance(e, ShotStart):
                self.shots[self.started] = [e]
                self.started += 1
            elif not isinstance(e, OperatorInput) and self.started:
                if self.started - 1 in self.shots:
                    self.shots[self.started - 1].append(e)
                else:  # after the last shot's call, before the next strike: a hand placing a ball, say
                    self.write(f"between shots: {describe(e)}")
        for step in result.steps:
            d = step.decision
            if d.shot is not None and d.shot in self.shots:
                events = self.shots.pop(d.shot)
                self.write(f"shot {d.shot} at {events[0].t_s:.2f} s: " + "; ".join(describe(e) for e in events))
                self.n_shots += 1
            self.n_pending += d.pending is not None
            self.write("   " + d.summary())
        for problem in result.problems:
            self.write(f"   not judged: {problem}")

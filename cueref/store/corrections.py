"""Correcting a stored match: an operator's override of a call, or an answer to a pending question.

A correction is an operator input (``override`` or ``answer``, ``tracking.events``) put into the
match's event log right after the shot it is about (after any answer already given to that shot's
question). The whole corrected log is then replayed through the rules engine (``rules.base.replay``),
so the engines re-judge every later call from the corrected one on: who plays, the removals, the
score, the end of the frame. The new calls become the match's current revision; the automatic calls
(revision 0) stay, and the correction keeps the shot's automatic and corrected call side by side.

A correction the rules refuse (an unknown field, a value the engine does not accept, a log that
becomes impossible) changes nothing and raises :class:`CorrectionError` with the engine's reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from cueref.store.frames import regroup
from cueref.store.store import MatchStore, MatchSummary, StoredDecision, StoredEvent, StoredShot
from rules import get_engine
from rules.base import Decision, Referee, RulesError
from tracking.events import Answer, Event, Override, event_to_dict

__all__ = ["CorrectionError", "CorrectionResult", "correct", "reapply", "shot_call", "standing_calls", "corrected_log"]

log = logging.getLogger(__name__)


class CorrectionError(ValueError):
    """A correction that cannot be made: the message says why and what to do instead."""


@dataclass(frozen=True, slots=True)
class CorrectionResult:
    revision: int
    automatic: Mapping[str, Any] | None  # the shot's call as refereed
    before: Mapping[str, Any] | None  # the shot's call before this correction (differs after earlier corrections)
    corrected: Mapping[str, Any]  # and after it
    changed_shots: tuple[int, ...]  # later shots whose call changed too
    stopped: str | None = None  # the rules could not judge the match to its end after the correction: why


def shot_call(decisions: Sequence[StoredDecision], shot: int) -> StoredDecision | None:
    """The call that stands for a shot: the last one made on it (an answer or an override follows
    the first call)."""
    return standing_calls(decisions).get(shot)


def standing_calls(decisions: Sequence[StoredDecision]) -> dict[int, StoredDecision]:
    """Shot number -> the call that stands on it: the last one made on the shot."""
    return {d.shot: d for d in decisions if d.shot is not None}


def corrected_log(events: Sequence[StoredEvent], shots: Mapping[int, StoredShot], corrections: Sequence[tuple[int, Event]]) -> list[Event]:
    """The event log with each ``(shot, input)`` put in right after that shot's events and after the
    answers already given to it; corrections of one shot keep their order."""
    after: dict[int, list[Event]] = {}
    for shot, e in corrections:
        i = shots[shot].last_seq + 1
        while i < len(events) and isinstance(events[i].event, Answer):
            i += 1
        after.setdefault(i, []).append(e)
    out: list[Event] = []
    for i in range(len(events) + 1):
        out.extend(after.get(i, ()))
        if i < len(events):
            out.append(events[i].event)
    return out


@dataclass(frozen=True, slots=True)
class _Judged:
    decisions: list[Decision]
    failed_at: Event | None = None  # the event the rules refused (nothing after it is judged)
    error: str | None = None


def _judge(m: MatchSummary, events: Sequence[Event]) -> _Judged:
    """Replay a log; an event the rules refuse stops the judging there (the calls before it stand)."""
    referee = Referee(get_engine(m.game, m.profile), list(m.players), dict(m.options))
    decisions: list[Decision] = []
    for e in [*events, None]:
        try:
            steps = referee.feed(e) if e is not None else referee.finish()
        except RulesError as err:
            return _Judged(decisions, e, str(err))
        decisions.extend(s.decision for s in steps)
    return _Judged(decisions)


def _stored(decisions: Sequence[Decision]) -> list[StoredDecision]:
    return [StoredDecision(i, d.shot, d.t_s, d.player, d.pending is not None, d.summary(), d.to_dict()) for i, d in enumerate(decisions)]


def correct(store: MatchStore, match: int | str, shot: int, *, reason: str, field: str | None = None, value: str | None = None,
            answer: str | None = None, author: str | None = None) -> CorrectionResult:
    """Override ``field`` of shot ``shot``'s call with ``value``, or give ``answer`` to its pending
    question, for ``reason``; the rest of the match is re-judged (see the module docstring)."""
    m = store.match(match)
    if not reason or not reason.strip():
        raise CorrectionError("give the reason for the correction (--reason TEXT): it is kept with both calls")
    if (answer is None) == (field is None):
        raise CorrectionError("a correction either overrides a field of the call (--set FIELD=VALUE) or answers its question (--answer)")
    shots = {s.number: s for s in store.shots(m.id)}
    if shot not in shots:
        raise CorrectionError(f"{m.title} has no shot {shot}: its shots are 0 to {len(shots) - 1}" if shots else f"{m.title} has no shot")
    events = store.events(m.id)
    current = store.decisions(m.id)
    call = shot_call(current, shot)
    t_s = shots[shot].t_end_s if shots[shot].t_end_s is not None else events[shots[shot].last_seq].event.t_s
    if answer is not None:
        if call is None or not call.pending:
            raise CorrectionError(f"shot {shot} has no pending question (its call: {call.summary.strip() if call else 'none'}); "
                                  "to change the call, override a field (--set FIELD=VALUE)")
        question = call.data["pending"]
        if answer not in question["options"]:
            raise CorrectionError(f"shot {shot}: {answer!r} does not answer {question['text']!r}: answer one of {', '.join(question['options'])}")
        event: Event = Answer(t_s=t_s, question=question["id"], answer=answer)
    else:
        if call is not None and call.pending:
            raise CorrectionError(f"shot {shot}'s call is pending ({call.data['pending']['text']}): answer it first (--answer "
                                  f"{'|'.join(call.data['pending']['options'])})")
        event = Override(t_s=t_s, field=field, value=value or "", note=reason.strip())
    earlier = [(c.shot, c.event) for c in store.corrections(m.id)]
    judged = _judge(m, corrected_log(events, shots, earlier + [(shot, event)]))
    if judged.failed_at is event:
        raise CorrectionError(f"the rules refuse the correction: {judged.error}")
    decisions = _stored(judged.decisions)
    new_call = shot_call(decisions, shot)
    if new_call is None:
        raise CorrectionError(f"shot {shot}: the engine made no call on it after the correction")
    automatic = shot_call(store.decisions(m.id, 0), shot)
    revision = m.revision + 1
    new_shots, frames = regroup(list(shots.values()), decisions)
    store.write_revision(m.id, revision, decisions, new_shots, frames, correction={
        "shot": shot, "event": event_to_dict(event), "reason": reason.strip(), "author": author,
        "automatic": dict(automatic.data) if automatic else {}, "corrected": dict(new_call.data)})
    old = {d.shot: d.summary for d in current if d.shot is not None}
    new = {d.shot: d.summary for d in decisions if d.shot is not None}
    changed = tuple(sorted(k for k in new if k > shot and old.get(k) != new[k]))
    stopped = None
    if judged.error is not None:
        stopped = f"the rules stop: {judged.error}"
    return CorrectionResult(revision, automatic.data if automatic else None, call.data if call else None, new_call.data, changed, stopped)


def reapply(store: MatchStore, match_id: int) -> str | None:
    """After the match was refereed again: judge its log with every correction again and make that
    the current revision. Returns None, or why the corrections no longer apply (the automatic calls
    are then current, and the corrections stay on record)."""
    m = store.match(match_id)
    corrections = store.corrections(m.id)
    if not corrections:
        return None
    shots = {s.number: s for s in store.shots(m.id)}
    automatic = store.decisions(m.id, 0)
    missing = [c.shot for c in corrections if c.shot not in shots]
    judged = None if missing else _judge(m, corrected_log(store.events(m.id), shots, [(c.shot, c.event) for c in corrections]))
    refused = next((c for c in corrections if judged is not None and judged.failed_at is c.event), None)
    if missing or refused is not None:
        new_shots, frames = regroup(list(shots.values()), automatic)
        store.write_revision(m.id, 0, automatic, new_shots, frames)
        reason = f"the match now has no shot {missing[0]}" if missing else f"the correction of shot {refused.shot}: {judged.error}"
        why = f"{m.title}: the corrections no longer apply to the match as refereed again ({reason}); the automatic calls are current"
        log.warning(why)
        return why
    decisions = _stored(judged.decisions)
    revision = m.revision + 1
    new_shots, frames = regroup(list(shots.values()), decisions)
    store.write_revision(m.id, revision, decisions, new_shots, frames)
    for c in corrections:
        call, auto = shot_call(decisions, c.shot), shot_call(automatic, c.shot)
        store.update_correction(c.id, revision=revision, automatic=auto.data if auto else {}, corrected=call.data if call else {})
    return None

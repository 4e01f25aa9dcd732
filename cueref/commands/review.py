"""``cueref review``: look back at stored matches and correct their calls.

* ``cueref review`` lists the matches in the store;
* ``cueref review MATCH`` lists a match's shots with the call that stands, pending questions and
  corrections marked;
* ``cueref review MATCH --shot N`` shows one shot: its events, its automatic call and the call that
  stands;
* ``cueref review MATCH --shot N --set FIELD=VALUE --reason TEXT`` overrides a field of the call
  (the fields each engine accepts: docs/rules-*.md, "override"); ``--answer ANSWER`` answers the
  shot's pending question instead. The rest of the match is judged again from the corrected call;
  the automatic call and the corrected one are both kept and both shown in the report.

MATCH is a match id, the start of its video's hash, or the video file itself.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from cueref.store import MatchStore, StoreError
from cueref.store.corrections import correct, shot_call, standing_calls
from tracking.events import Override, event_to_dict


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("match", nargs="?", help="match id, start of its video hash, or the video file (default: list the matches)")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or cueref-out/matches.sqlite)")
    p.add_argument("--shot", type=int, help="the shot to show or correct (as numbered in the listing)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--set", metavar="FIELD=VALUE", help="override a field of the shot's call (e.g. fouls=none, next_player=B)")
    what.add_argument("--answer", help="answer the shot's pending question (one of the options it lists)")
    p.add_argument("--reason", help="why the call is corrected (required with --set and --answer; kept with both calls)")
    p.add_argument("--by", metavar="NAME", help="who makes the correction (kept with it)")


def _clock(t_s: float) -> str:
    m, s = divmod(max(t_s, 0.0), 60.0)
    return f"{int(m):02d}:{s:04.1f}"


def _fouls(data: Mapping[str, Any]) -> str:
    return ", ".join(data.get("fouls") or ()) or "no foul"


def _list_matches(store: MatchStore) -> int:
    matches = store.matches()
    if not matches:
        print(f"no match in the store {store.url} yet: `cueref report` stores one from a referee's output or an event log")
        return 0
    print(f"{'id':>4}  {'played':16}  {'game':13}  {'players':20}  {'shots':>5}  {'status':9}  video")
    for m in matches:
        corrected = " (corrected)" if m.revision else ""
        print(f"{m.id:>4}  {m.played_at:%Y-%m-%d %H:%M}  {m.game:13}  {' v '.join(m.players)[:20]:20}  {m.shots:>5}  "
              f"{m.status:9}  {m.video_path}{corrected}")
    return 0


def _list_shots(store: MatchStore, ref: str) -> int:
    m = store.match(ref)
    standing = standing_calls(store.decisions(m.id))
    corrected = {c.shot: c for c in store.corrections(m.id)}
    print(f"{m.title} ({m.status}; {m.shots} shots; store {store.url})")
    for s in store.shots(m.id):
        call = standing.get(s.number)
        text = call.summary.split(":", 1)[-1].strip() if call else "no call (the rules could not judge this far)"
        if call is not None and call.pending:
            q = call.data["pending"]
            text = f"PENDING - {q['text']} [{'/'.join(q['options'])}]: cueref review {m.id} --shot {s.number} --answer ..."
        mark = " [corrected]" if s.number in corrected else ""
        print(f"  shot {s.number:>3}  {_clock(s.t_start_s)}  frame {s.frame_number}  {s.player or '?':8}  {text}{mark}")
    return 0


def _show_shot(store: MatchStore, ref: str, n: int) -> int:
    m = store.match(ref)
    (shot,) = store.shots(m.id, numbers=[n]) or [None]
    if shot is None:
        raise StoreError(f"{m.title} has no shot {n}: `cueref review {m.id}` lists its shots")
    print(f"{m.title}: shot {n}, frame {shot.frame_number}, {shot.player or '?'} strikes {shot.struck} at {_clock(shot.t_start_s)}")
    for e in store.events(m.id)[shot.first_seq:shot.last_seq + 1]:
        print(f"    {e.event.t_s:8.3f}s  {e.event.kind:12}  " + " ".join(
            f"{k}={v}" for k, v in _event_fields(e.event).items()))
    auto, now = shot_call(store.decisions(m.id, 0), n), shot_call(store.decisions(m.id), n)
    print(f"  automatic call: {auto.summary.strip() if auto else 'none'}")
    if now is not None and auto is not None and now.data != auto.data:
        print(f"  call that stands: {now.summary.strip()}")
    for c in store.corrections(m.id):
        if c.shot == n:
            what = f"{c.event.field}={c.event.value}" if isinstance(c.event, Override) else f"{c.event.question}={c.event.answer}"
            print(f"  correction {c.created_at:%Y-%m-%d %H:%M}{' by ' + c.author if c.author else ''}: {c.event.kind} {what}: {c.reason}")
    return 0


def _event_fields(e: Any) -> dict[str, Any]:
    return {k: v for k, v in event_to_dict(e).items() if k not in ("kind", "t_s", "positions", "pins")}


def run(args: argparse.Namespace) -> int:
    with MatchStore(args.store) as store:
        if args.match is None:
            if args.shot is not None or args.set or args.answer:
                raise StoreError("name the match to correct: cueref review MATCH --shot N ... (`cueref review` lists them)")
            return _list_matches(store)
        if args.set is None and args.answer is None:
            return _show_shot(store, args.match, args.shot) if args.shot is not None else _list_shots(store, args.match)
        if args.shot is None:
            raise StoreError("say which shot to correct: --shot N (`cueref review MATCH` lists the shots)")
        field = value = None
        if args.set is not None:
            field, sep, value = args.set.partition("=")
            if not sep or not field.strip():
                raise StoreError(f"--set {args.set!r} must be FIELD=VALUE (e.g. fouls=none, next_player=B)")
            field, value = field.strip(), value.strip()
        result = correct(store, args.match, args.shot, reason=args.reason or "", field=field, value=value, answer=args.answer,
                         author=args.by)
        print(f"shot {args.shot}: automatic call: {_call_line(result.automatic)}")
        if result.before is not None and result.before != result.automatic:
            print(f"shot {args.shot}: call before this correction: {_call_line(result.before)}")
        print(f"shot {args.shot}: corrected call: {_call_line(result.corrected)}")
        if result.changed_shots:
            print(f"the rest of the match was judged again: the calls of shots {', '.join(map(str, result.changed_shots))} changed")
        else:
            print("the rest of the match was judged again: no later call changed")
        if result.stopped:
            print(f"{result.stopped}; the later shots have no call until that is settled (`cueref review {args.match}` lists them)")
        return 0


def _call_line(data: Mapping[str, Any] | None) -> str:
    if not data:
        return "none"
    if data.get("pending"):
        return f"PENDING - {data['pending']['text']}"
    return f"{data.get('explanation', '')} ({_fouls(data)}; next {data.get('next_player') or '-'})"

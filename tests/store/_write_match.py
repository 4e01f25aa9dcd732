"""Referee a sample clip's event log into a store slowly, as a live referee would, printing one line
per call once it is written (``decided SHOT``). The kill test runs this in a subprocess and kills it
with SIGKILL in the middle of the match.

    python -m tests.store._write_match STORE EVENTS.jsonl VIDEO TRUTH.json DELAY_S
"""

import sys
import time

from cueref.store import MatchRecorder, MatchStore
from rules import get_engine
from rules.base import Referee
from tests.store._truth import truth_tracks
from tracking.events import read_events


def main(store_location: str, events_path: str, video: str, truth: str, delay_s: float) -> None:
    header, events = read_events(events_path)
    players = list(header.players)
    tracks = truth_tracks(truth)
    store = MatchStore(store_location)
    referee = Referee(get_engine(header.game, header.profile), players, header.options)
    frames = sorted(set(tracks.frame.tolist()))
    by_frame = {f: tracks[tracks.frame == f] for f in frames}
    k = 0
    with MatchRecorder.open(store, video=video, game=header.game, profile=header.profile, players=players, options=header.options) as rec:
        for e in events:
            while k < len(frames) and by_frame[frames[k]].t_s[0] <= e.t_s:
                rec.frame(frames[k], float(by_frame[frames[k]].t_s[0]), by_frame[frames[k]])
                k += 1
            rec.event(e)
            for step in referee.feed(e):
                rec.decision(step.decision)
                print(f"decided {step.decision.shot}", flush=True)
            time.sleep(delay_s)
        for step in referee.finish():
            rec.decision(step.decision)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))

"""The review report: one self-contained HTML page per match (styles, script, diagrams and plots
inside it), beside the annotated video it plays.

The page shows the score line and the frames; the annotated video; a strip with a mark per shot and
a timeline of every call (the rule quoted for each foul, pending questions and operator corrections
shown as such, with the automatic call beside the corrected one); clicking a shot plays that moment
of the video and draws the shot on the table (``cueref.report.diagram``); and the match's
statistics with their plots.

It stays quick with a two-hour match: the rows are plain HTML the browser lays out lazily
(``content-visibility``), and each shot's diagram waits in a ``<template>`` (parsed, never drawn)
until its shot is opened. ``bench/report_bench.py`` measures a 600-shot page in Chromium.
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from calibration.table import resolve_profile
from cueref.report.calls import RULEBOOKS, call_text, foul_rule, score_line
from cueref.report.diagram import shot_svg
from cueref.stats import match_facts, summarise
from cueref.stats.output import format_table
from cueref.store import MatchStore
from cueref.store.corrections import standing_calls
from cueref.store.store import StoredCorrection, StoredDecision

__all__ = ["write_report", "report_html"]

GAME_TITLES = {"ficha": "Sinuca de Ficha", "brasileira": "Sinuca Brasileira", "bar-billiards": "4-pin bar billiards"}

STYLE = """
:root{--bg:#14181c;--panel:#1e252b;--text:#e8ecef;--muted:#9aa7b1;--foul:#ff6b6b;--ok:#5fd38d;--pending:#ffa94d;--corr:#b197fc}
*{box-sizing:border-box}body{margin:0;font:14px/1.4 system-ui,sans-serif;background:var(--bg);color:var(--text)}
header{padding:12px 20px;border-bottom:1px solid #333}h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:8px 0}
.meta{color:var(--muted);margin:0}.score{font-size:18px;font-weight:600;margin:6px 0}
.frames{margin:4px 0;padding-left:20px;color:var(--muted)}
main{display:grid;grid-template-columns:minmax(420px,1.1fr) minmax(380px,1fr);gap:16px;padding:12px 20px}
.left{position:sticky;top:8px;align-self:start}video{width:100%;max-height:46vh;background:#000;border-radius:4px}
.strip{position:relative;height:22px;background:var(--panel);border-radius:3px;margin:6px 0;cursor:pointer}
.strip i{position:absolute;top:3px;width:3px;height:16px;background:var(--ok);border-radius:1px}
.strip i.foul{background:var(--foul)}.strip i.pending{background:var(--pending)}.strip i.corrected{outline:2px solid var(--corr)}
.strip b{position:absolute;top:0;width:2px;height:22px;background:#fff;pointer-events:none}
.diagram{background:var(--panel);border-radius:4px;padding:8px;min-height:120px}.diagram svg{width:100%;height:auto;max-height:40vh}
.diagram h3{margin:0 0 6px;font-size:14px}.legend{color:var(--muted);font-size:12px}
.tools{display:flex;gap:6px;margin-bottom:6px}.tools button{background:var(--panel);color:var(--text);border:1px solid #444;border-radius:3px;padding:3px 8px;cursor:pointer}
.tools button.on{border-color:var(--text)}
#shots{list-style:none;margin:0;padding:0;max-height:calc(100vh - 160px);overflow-y:auto}
#shots li{content-visibility:auto;contain-intrinsic-size:auto 48px;padding:6px 8px;border-left:4px solid var(--ok);background:var(--panel);margin-bottom:4px;border-radius:3px;cursor:pointer}
#shots li:hover,#shots li.current{background:#2a333b}#shots li.sel{outline:1px solid var(--text)}
#shots li.foul{border-left-color:var(--foul)}#shots li.pending{border-left-color:var(--pending)}#shots li.input{border-left-color:#666;cursor:default}
.row{display:flex;gap:8px;align-items:baseline}.n{font-weight:700;min-width:2.5em}.clock,.who{color:var(--muted);min-width:3.5em}
.badge{display:inline-block;border-radius:3px;padding:0 5px;margin:2px 4px 0 0;font-size:12px}
.badge.foul{background:#5a2020;color:#ffd6d6}.badge.pending{background:#5a3a10;color:#ffe0bf}.badge.corr{background:#3a2e60;color:#e5dbff}
.was{color:var(--muted);font-size:12px}.was s{color:#b9b9b9}.why{color:var(--corr);font-size:12px}
.answer{color:var(--pending);font-size:12px}code{background:#0c0f12;padding:0 3px;border-radius:2px}
.stats{padding:4px 20px 30px}.stats pre{background:var(--panel);padding:10px;overflow-x:auto;font-size:12px}
.plots img{max-width:100%;background:#fff;margin:6px 0;border-radius:3px}
"""

SCRIPT = """
(function(){
const video=document.getElementById('video'),rows=[...document.querySelectorAll('#shots li[data-t]')];
const times=rows.map(r=>+r.dataset.t),diagram=document.getElementById('diagram'),strip=document.getElementById('strip');
const head=document.getElementById('playhead'),duration=+strip.dataset.duration||1;let selected=null;
function show(row){
  if(selected)selected.classList.remove('sel');selected=row;row.classList.add('sel');
  const t=document.getElementById('d-'+row.dataset.n);
  diagram.replaceChildren(t?t.content.cloneNode(true):document.createTextNode('no diagram for this shot'));
}
function open(row,play){
  show(row);
  if(video){video.currentTime=Math.max(0,+row.dataset.t-0.5);if(play){const p=video.play();if(p)p.catch(()=>{});}}
}
document.getElementById('shots').addEventListener('click',e=>{const row=e.target.closest('li[data-t]');if(row)open(row,true);});
document.getElementById('shots').addEventListener('keydown',e=>{
  const row=e.target.closest('li[data-t]');if(!row)return;
  if(e.key==='Enter'){open(row,true);e.preventDefault();}
  const next=e.key==='ArrowDown'?rows[rows.indexOf(row)+1]:e.key==='ArrowUp'?rows[rows.indexOf(row)-1]:null;
  if(next){next.focus();show(next);e.preventDefault();}
});
strip.addEventListener('click',e=>{
  const tick=e.target.closest('i[data-n]');
  if(tick){const row=document.getElementById('shot-'+tick.dataset.n);open(row,true);row.scrollIntoView({block:'nearest'});return;}
  if(video){const r=strip.getBoundingClientRect();video.currentTime=duration*(e.clientX-r.left)/r.width;}
});
let current=null;
if(video)video.addEventListener('timeupdate',()=>{
  head.style.left=(100*video.currentTime/duration)+'%';
  let lo=0,hi=times.length-1,k=-1;while(lo<=hi){const m=(lo+hi)>>1;if(times[m]<=video.currentTime+0.5){k=m;lo=m+1}else hi=m-1}
  const row=k>=0?rows[k]:null;if(row!==current){if(current)current.classList.remove('current');current=row;if(row)row.classList.add('current');}
});
for(const b of document.querySelectorAll('.tools button'))b.addEventListener('click',()=>{
  for(const o of document.querySelectorAll('.tools button'))o.classList.toggle('on',o===b);
  const k=b.dataset.filter;for(const r of document.querySelectorAll('#shots li'))r.hidden=k!=='all'&&!r.classList.contains(k);
});
if(rows.length)show(rows[0]);
})();
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _clock(t_s: float) -> str:
    m, s = divmod(max(t_s, 0.0), 60.0)
    h, m = divmod(int(m), 60)
    return (f"{h}:{m:02d}:{s:04.1f}" if h else f"{m:02d}:{s:04.1f}")


def _fouls(call: Mapping[str, Any] | None) -> list[tuple[str, bool]]:
    """``(foul, before the shot)`` of a call and of the calls on what happened just before it."""
    call = call or {}
    return [(f, False) for f in call.get("fouls") or ()] + [(f, True) for p in call.get("prior") or () for f in p.get("fouls") or ()]


def _fouls_html(game: str, call: Mapping[str, Any] | None) -> str:
    out = []
    for foul, before in _fouls(call):
        rule = foul_rule(game, foul)
        out.append(f'<span class="badge foul">{"before the shot: " if before else ""}{_e(foul)}{f" · rule {_e(rule)}" if rule else ""}</span>')
    return "".join(out)


def _row(game: str, match_id: int, n: int | None, t_s: float, who: str | None, call: Mapping[str, Any] | None,
         automatic: Mapping[str, Any] | None, corrections: Sequence[StoredCorrection], frame: int | None) -> str:
    pending = bool(call and call.get("pending"))
    classes = ["shot" if n is not None else "input"]
    if _fouls(call):
        classes.append("foul")
    if pending:
        classes.append("pending")
    if corrections:
        classes.append("corrected")
    attrs = f' id="shot-{n}" data-n="{n}" data-t="{t_s:.3f}" tabindex="0"' if n is not None else ""
    label = f"shot {n}" if n is not None else "input"
    parts = [f'<li class="{" ".join(classes)}"{attrs}><div class="row"><span class="n">{label}</span>'
             f'<span class="clock">{_clock(t_s)}</span><span class="who">{_e(who or "?")}</span>'
             f'{f"<span class=clock>frame {frame}</span>" if frame else ""}</div>']
    if pending:
        q = call["pending"]
        parts.append(f'<div><span class="badge pending">pending question</span> {_e(q["text"])}</div>'
                     f'<div class="answer">answer: <code>cueref review {match_id} --shot {n} --answer {_e("|".join(q["options"]))} '
                     f'--reason ...</code></div>')
    else:
        parts.append(f'<div class="call">{_e(call_text(call))}</div>')
    parts.append(_fouls_html(game, call))
    for c in corrections:
        what = f"{c.event.field}={c.event.value}" if c.event.kind == "override" else f"answer {c.event.answer}"
        by = f" by {_e(c.author)}" if c.author else ""
        parts.append(f'<div><span class="badge corr">corrected{by}</span> <span class="why">{_e(what)}: “{_e(c.reason)}”</span></div>')
    if corrections and automatic is not None:
        parts.append(f'<div class="was">automatic call: <s>{_e(call_text(automatic))}</s> {_fouls_html(game, automatic)}</div>')
    parts.append("</li>")
    return "".join(parts)


def _png(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def report_html(store: MatchStore, match: int | str, *, video: str | None = None, plots: bool = True) -> str:
    """The page of a stored match; ``video`` is the annotated video's URL relative to the page."""
    m = store.match(match)
    profile = resolve_profile(m.profile)
    events = [e.event for e in store.events(m.id)]
    shots = store.shots(m.id, tracks=True)
    calls = store.decisions(m.id)
    automatic = store.decisions(m.id, 0) if m.revision else calls
    corrections: dict[int, list[StoredCorrection]] = {}
    for c in store.corrections(m.id):
        corrections.setdefault(c.shot, []).append(c)
    frames = store.frames(m.id)

    rows, templates, ticks = [], [], []
    standing, standing_auto = standing_calls(calls), standing_calls(automatic)
    duration = max([s.t_end_s or s.t_start_s for s in shots] + [e.t_s for e in events[-1:]] + [1.0])
    inputs: list[StoredDecision] = [d for d in calls if d.shot is None]
    items: list[tuple[float, int, Any]] = [(s.t_start_s, 0, s) for s in shots] + [(d.t_s, 1, d) for d in inputs]
    for t_s, _, item in sorted(items, key=lambda x: (x[0], x[1])):
        if isinstance(item, StoredDecision):
            rows.append(_row(m.game, m.id, None, t_s, item.player, item.data, None, (), None))
            continue
        s = item
        call, auto = standing.get(s.number), standing_auto.get(s.number)
        data = dict(call.data) if call else None
        rows.append(_row(m.game, m.id, s.number, s.t_start_s, s.player, data, dict(auto.data) if auto else None,
                         corrections.get(s.number, ()), s.frame_number))
        title = f"shot {s.number} · {s.player or '?'} · {_clock(s.t_start_s)}"
        svg = shot_svg(profile, events[s.first_seq:s.last_seq + 1], s.tracks, title=title)
        legend = "tracked paths" if s.tracks is not None and len(s.tracks) else "paths from the event log (dashed)"
        templates.append(f'<template id="d-{s.number}"><h3>{_e(title)}</h3>{svg}<p class="legend">{legend}; numbered circles: '
                         f'ball contacts in order; diamonds: cushion contacts; yellow rings: pots; faint balls: where they lay '
                         f'at the strike</p><p>{_e(call_text(data))}</p></template>')
        kind = " ".join(k for k, on in (("foul", bool(_fouls(data))), ("pending", bool(data and data.get("pending"))),
                                        ("corrected", s.number in corrections)) if on)
        ticks.append(f'<i data-n="{s.number}" class="{kind}" style="left:{100 * s.t_start_s / duration:.3f}%" '
                     f'title="shot {s.number}: {_e(call_text(data))[:120]}"></i>')

    last = calls[-1].data if calls else None
    frame_items = "".join(
        f"<li>frame {f.number}: {_e(f.winner + ' won' if f.winner else 'in play')} · shots {f.first_shot}–{f.last_shot} · "
        f"{_clock(f.t_start_s)}–{_clock(f.t_end_s)} · broken by {_e(f.breaker or '?')}</li>" for f in frames)
    revision = f" · {sum(len(v) for v in corrections.values())} correction(s) by review" if corrections else ""
    pending_n = sum(1 for c in standing.values() if c.pending)
    pending = f" · {pending_n} pending question(s)" if pending_n else ""
    stats_block = ""
    stats = summarise([match_facts(store, m)])
    if stats:
        imgs = ""
        if plots:
            from cueref.stats.plots import all_plots

            imgs = "".join(f'<img alt="{_e(name)}" src="{_png(png)}">' for name, png in all_plots(stats, profile).items())
        stats_block = (f'<section class="stats"><h2>Statistics</h2><pre>{_e(format_table(stats))}</pre>'
                       f'<p class="meta">definitions: docs/store.md (pot attempted, safety, cut angle, breaks)</p>'
                       f'<div class="plots">{imgs}</div></section>')
    video_html = (f'<video id="video" src="{_e(video)}" controls muted playsinline preload="auto"></video>' if video else
                  '<p class="meta">no video beside this report</p>')
    title = f"{GAME_TITLES.get(m.game, m.game)}: {' v '.join(m.players)}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{_e(title)} · cueref review</title><style>{STYLE}</style></head>
<body>
<header><h1>{_e(title)}</h1>
<p class="meta">{_e(Path(m.video_path).name)} · played {m.played_at:%Y-%m-%d %H:%M} · {len(shots)} shots · {len(frames)} frame(s){revision}{pending}
 · rules: {_e(RULEBOOKS.get(m.game, m.game))} · match {m.id} ({_e(m.status)})</p>
<p class="score">{_e(score_line(m.game, last) or "no call yet")}</p>
<ol class="frames">{frame_items}</ol></header>
<main><section class="left">{video_html}
<div id="strip" class="strip" data-duration="{duration:.3f}">{''.join(ticks)}<b id="playhead"></b></div>
<div id="diagram" class="diagram"><p class="meta">Click a shot to play it and see it drawn on the table.</p></div></section>
<section><div class="tools"><button class="on" data-filter="all">all</button><button data-filter="foul">fouls</button>
<button data-filter="pending">pending</button><button data-filter="corrected">corrected</button></div>
<ol id="shots">{''.join(rows)}</ol>{''.join(templates)}</section></main>
{stats_block}
<script>{SCRIPT}</script>
</body></html>
"""


def write_report(store: MatchStore, match: int | str, out_dir: str | os.PathLike[str], *, video: str | os.PathLike[str] | None = None,
                 plots: bool = True, name: str = "report.html") -> Path:
    """Write ``out_dir/report.html`` for a stored match. ``video``: the video to play in it (default:
    the match's annotated video, else none), referred to by its path relative to the page."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    m = store.match(match)
    chosen = video if video is not None else m.annotated_video
    rel = None
    if chosen is not None:
        rel = Path(os.path.relpath(Path(chosen).resolve(), out.resolve())).as_posix()
    path = out / name
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(report_html(store, m.id, video=rel, plots=plots), encoding="utf-8")
    tmp.replace(path)
    return path

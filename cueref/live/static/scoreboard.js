// cueref live: the scoreboard, for a screen in the bar or a browser source in streaming software.
// ?transparent=1 drops the background; ?sound=chime or ?sound=voice announces each call.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
if (params.get("transparent") === "1") document.body.classList.add("transparent");
const sound = new Announcer($("sound"));
if (params.has("sound")) { $("sound-box").hidden = false; $("sound").value = params.get("sound"); sound.mode = params.get("sound"); }

let setup = null;
let state = null;
let receivedAt = 0;
let lastCallKey = null;

function render() {
  const score = state.score;
  $("sides").replaceChildren(...score.sides.map((side) =>
    el("div", { class: `side ${side === score.to_play && !score.over ? "turn" : ""} ${side === score.winner ? "winner" : ""}` },
      el("div", { class: "name", text: side }),
      el("div", { class: "points", text: score.frame[side] }))));
  const frames = score.sides.map((s) => score.match[s]).join(" - ");
  $("match").textContent = score.best_of > 1
    ? `frame ${score.frame_no} of best of ${score.best_of} · frames ${frames} · ${score.frame_unit}`
    : `${score.frame_unit}${score.over ? " · frame over" : ""}`;
  $("break").hidden = !score.break || !score.break.points;
  if (score.break) $("break").textContent = `${score.break.player}'s break ${score.break.points}`;
  const call = state.calls[0];
  $("last-call").textContent = call ? (call.pending ? `Referee's question: ${call.pending.text}` : call.explanation) : "";
  $("last-call").className = `last-call ${call && call.fouls.length ? "foul" : ""}`;
  if (call) {
    const key = `${call.t_s}|${call.shot}|${call.summary}`;
    if (lastCallKey !== null && key !== lastCallKey) sound.announce(call);
    lastCallKey = key;
  } else lastCallKey = "";
  tick();
}

function tick() {
  if (!state) return;
  const left = clockLeft(state.score, state, receivedAt);
  $("clock").hidden = left === null;
  if (left !== null) $("clock").textContent = state.score.clock.bar_down ? "bar down" : fmtClock(left);
}

connect(
  (s) => { setup = s; document.title = `${s.players.join(" v ")}: cueref`; },
  (s) => { state = s; receivedAt = performance.now(); render(); },
  (up) => document.body.classList.toggle("offline", !up),
);
setInterval(tick, 500);

// cueref live: the operator's console. Shows the table and the calls as they come; every button posts
// one operator input to /api/input, which puts it in the event log.
"use strict";

const $ = (id) => document.getElementById(id);
let setup = null;
let state = null;
let receivedAt = 0;
let diagram = null;
let lastCallKey = null;
let nominating = { ball: null };
const sound = new Announcer($("sound"));

const POCKET_KEYS = { q: "TL", w: "TM", e: "TR", a: "BL", s: "BM", d: "BR" };
// what each input asks for, and its label
const FORMS = {
  concession: { label: "Concession", fields: ["player"] },
  warning: { label: "Warning", fields: ["player", "rule"] },
  operator_foul: { label: "Foul (unseen)", fields: ["player", "rule", "note"] },
  removal_choice: { label: "Removal choice", fields: ["ball"] },
  play_again: { label: "Play again", fields: [] },
  interference: { label: "Interference", fields: ["note"] },
  bar_dropped: { label: "Bar dropped", fields: [] },
  endgame: { label: "Endgame", fields: ["player"] },
  rebreak_choice: { label: "Rebreak choice", fields: ["choice"] },
};

function toast(text, bad = false) {
  const t = $("toast");
  t.textContent = text;
  t.classList.toggle("bad", bad);
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, bad ? 8000 : 3000);
}

// one operator input (or an undo) to the referee; says whether it was taken
async function post(path, input) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(input),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) toast(body.error || `refused (${response.status})`, true);
  else toast(`${body.queued} given: it enters the log once the camera's events reach it`);
  return response.ok;
}

const send = (input) => post("/api/input", input);

// ---- the inputs

function playerChoices() {
  return state ? state.score.sides : setup.players;
}

function showForm(kind) {
  const spec = FORMS[kind];
  const form = $("input-form");
  if (spec.fields.length === 0) { send({ kind }); form.hidden = true; return; }
  const fields = spec.fields.map((name) => {
    if (name === "player") return el("select", { name }, ...playerChoices().map((p) => el("option", { value: p, text: p })));
    if (name === "ball") return el("select", { name }, ...setup.object_balls.map((b) => el("option", { value: b, text: b })));
    if (name === "choice") return el("select", { name }, el("option", { value: "rebreak", text: "rebreak" }), el("option", { value: "play_on", text: "play on" }));
    return el("input", { name, placeholder: name === "rule" ? "rule number" : name, autocomplete: "off" });
  });
  form.replaceChildren(el("strong", { text: spec.label }), ...fields,
    el("button", { type: "submit", text: "Give" }),
    el("button", { type: "button", text: "Cancel", onclick: () => { form.hidden = true; } }));
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const input = { kind };
    for (const f of fields) if (f.value !== "") input[f.name] = f.value;
    if (await send(input)) form.hidden = true;
  };
  form.hidden = false;
  fields[0].focus();
}

function buildInputs() {
  const box = $("inputs");
  box.replaceChildren(...setup.inputs.filter((k) => FORMS[k]).map((kind) =>
    el("button", { type: "button", "data-input": kind, text: FORMS[kind].label, onclick: () => showForm(kind) })));
  $("nomination").hidden = !setup.inputs.includes("nomination");
  $("nominate-hint").hidden = $("nomination").hidden;
  $("nominate-pockets").replaceChildren(...setup.table.pockets.map((p) => {
    const key = Object.keys(POCKET_KEYS).find((k) => POCKET_KEYS[k] === p.id);
    return el("button", { type: "button", "data-pocket": p.id, text: key ? `${p.id} (${key.toUpperCase()})` : p.id,
                          onclick: () => nominatePocket(p.id) });
  }));
}

function nominationBalls() {
  return state ? state.on_table : setup.object_balls;
}

function renderNominationBalls() {
  $("nominate-balls").replaceChildren(...nominationBalls().map((b, i) =>
    el("button", { type: "button", "data-ball": b, class: nominating.ball === b ? "chosen" : "",
                   style: { "--ball": setup.balls[b].colour }, text: `${i + 1} ${b}`, onclick: () => nominateBall(b) })));
  $("nominate-pockets").classList.toggle("waiting", nominating.ball !== null);
}

function nominateBall(ball) {
  nominating.ball = ball;
  renderNominationBalls();
}

async function nominatePocket(pocket) {
  if (!setup.inputs.includes("nomination")) return;
  if (nominating.ball === null) { toast("nominate a ball first, then its pocket", true); return; }
  diagram.highlight(pocket);
  const ok = await send({ kind: "nomination", ball: nominating.ball, pocket });
  nominating.ball = null;
  renderNominationBalls();
  if (!ok) diagram.highlight(null);
}

async function answer(option) {
  if (!state || !state.pending) return;
  await send({ kind: "answer", question: state.pending.id, answer: option });
}

document.addEventListener("keydown", (ev) => {
  if (ev.target.closest("input, select, textarea") || !setup) return;
  const key = ev.key.toLowerCase();
  if (state && state.pending && /^[1-9]$/.test(key)) {  // a pending question takes the number keys first
    const option = state.pending.options[Number(key) - 1];
    if (option) answer(option);
    return;
  }
  if (!setup.inputs.includes("nomination")) return;
  if (key === "escape") { nominating.ball = null; renderNominationBalls(); diagram.highlight(null); }
  else if (/^[1-9]$/.test(key)) { const b = nominationBalls()[Number(key) - 1]; if (b) nominateBall(b); }
  else if (POCKET_KEYS[key]) nominatePocket(POCKET_KEYS[key]);
});

$("undo-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (await post("/api/undo", { reason: $("undo-reason").value })) $("undo-reason").value = "";
});

// ---- what the referee says

function scoreline(score) {
  return score.sides.map((side) => {
    const turn = side === score.to_play ? " turn" : "";
    return `<span class="side${turn}">${escapeHtml(side)} <b>${score.frame[side]}</b>` +
      (score.best_of > 1 ? ` <small>(${score.match[side]})</small>` : "") + "</span>";
  }).join("") + `<span class="unit">${escapeHtml(score.frame_unit)}</span>`;
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function renderState() {
  diagram.balls(state.balls);
  $("media-time").textContent = fmtClock(state.t_s);
  $("scoreline").innerHTML = scoreline(state.score);
  const src = state.source;
  const gap = src.last_gap ? `; last gap ${src.last_gap.t_s.toFixed(1)}-${src.last_gap.until_s.toFixed(1)} s` : "";
  $("source").textContent = state.finished ? "source ended" : (src.valid ? "camera ok" : "camera: not seen") + (src.gaps ? ` (${src.gaps} gap${src.gaps > 1 ? "s" : ""})` : "");
  $("source").title = `calibration ${src.calibration}${gap}`;
  $("source").className = `source ${src.valid && !state.finished ? "ok" : "bad"}`;

  const q = state.pending;
  $("question").hidden = !q;
  if (q) {
    $("question-text").textContent = q.text;
    $("question-options").replaceChildren(...q.options.map((o, i) =>
      el("button", { type: "button", "data-answer": o, text: `${i + 1}  ${o}`, onclick: () => answer(o) })));
  }
  const call = state.calls[0];
  if (call) {
    $("call").textContent = call.pending ? `Pending: ${call.pending.text}` : call.explanation;
    $("call").className = `call-text ${call.fouls.length ? "foul" : ""} ${call.pending ? "pending" : ""}`;
    $("call-rules").textContent = `${call.player ? call.player + ", " : ""}${call.shot !== null ? "shot " + call.shot : "input"} at ${call.t_s.toFixed(2)} s` +
      (call.rules.length ? ` · rules ${call.rules.join(", ")} (${setup.rulebook})` : "");
    const key = `${call.t_s}|${call.shot}|${call.summary}`;
    if (lastCallKey !== null && key !== lastCallKey) sound.announce(call);
    lastCallKey = key;
  } else lastCallKey = "";
  $("calls").replaceChildren(...state.calls.map((c) => el("li", { class: c.fouls.length ? "foul" : "", text: c.summary.trim() })));
  $("given").replaceChildren(...state.inputs.map((i) => el("li", { text: `${i.t_s.toFixed(2)} s ${i.text}` })));
  $("problems").replaceChildren(...state.problems.map((p) => el("p", { text: `Refused: ${p}` })));
  if (setup.inputs.includes("nomination")) {
    const n = state.nomination;
    $("nomination-now").textContent = n ? `for the next shot: ${n.ball} into ${n.pocket}` : "none for the next shot";
    if (!nominating.ball) diagram.highlight(n ? n.pocket : null);
    renderNominationBalls();
  }
}

function tickClock() {
  if (!state) return;
  const left = clockLeft(state.score, state, receivedAt);
  $("clock").hidden = left === null;
  if (left !== null) {
    const c = state.score.clock;
    $("clock").textContent = c.bar_down ? "bar down" : `clock ${fmtClock(left)}`;
  }
}

connect(
  (s) => {
    setup = s;
    $("game").textContent = `${s.game} · ${s.table.name} table · ${s.rulebook}`;
    diagram = new TableDiagram($("table"), s, nominatePocket);
    buildInputs();
    renderNominationBalls();
  },
  (s) => { state = s; receivedAt = performance.now(); renderState(); tickClock(); },
  (up) => { $("link").textContent = up ? "live" : "offline"; $("link").className = `link ${up ? "up" : "down"}`; },
);
setInterval(tickClock, 500);

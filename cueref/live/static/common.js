// cueref live: what the console and the scoreboard share: the connection, the table diagram, the sound.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

// The WebSocket to the referee: setup once, then each new state. Reconnects when it drops.
function connect(onSetup, onState, onLink) {
  let retryMs = 500;
  function open() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/ws`);
    ws.onopen = () => { retryMs = 500; onLink(true); };
    ws.onmessage = (msg) => {
      const data = JSON.parse(msg.data);
      if (data.type === "setup") onSetup(data);
      else if (data.type === "state") onState(data);
    };
    ws.onclose = () => {
      onLink(false);
      setTimeout(open, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  }
  open();
}

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k === "style") for (const [prop, value] of Object.entries(v)) node.style.setProperty(prop, value);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

// The table to scale, in table millimetres (x along the length, y across, origin at the head-top
// corner of the playing surface), and its balls. onPocket(id) is called when a pocket is clicked.
class TableDiagram {
  constructor(svg, setup, onPocket) {
    const t = setup.table;
    this.svg = svg;
    this.setup = setup;
    const rail = t.rail_mm;
    svg.setAttribute("viewBox", `${-rail} ${-rail} ${t.length_mm + 2 * rail} ${t.width_mm + 2 * rail}`);
    svg.replaceChildren();
    svg.append(el("svg:rect", { x: -rail, y: -rail, width: t.length_mm + 2 * rail, height: t.width_mm + 2 * rail,
                                rx: rail / 3, class: "rail" }));
    svg.append(el("svg:rect", { x: 0, y: 0, width: t.length_mm, height: t.width_mm, fill: t.cloth, class: "cloth" }));
    if (t.baulk_x_mm !== null) {
      svg.append(el("svg:line", { x1: t.baulk_x_mm, y1: 0, x2: t.baulk_x_mm, y2: t.width_mm, class: "marking" }));
    }
    if (t.d) {
      const { x, y, r, dir } = t.d;
      const sweep = dir < 0 ? 0 : 1;
      svg.append(el("svg:path", { d: `M ${x} ${y - r} A ${r} ${r} 0 0 ${sweep} ${x} ${y + r}`, class: "marking" }));
    }
    for (const p of t.pockets) {
      const pocket = el("svg:circle", { cx: p.x, cy: p.y, r: p.r, class: "pocket", "data-pocket": p.id });
      pocket.append(el("svg:title", { text: p.id }));
      if (onPocket) pocket.addEventListener("click", () => onPocket(p.id));
      svg.append(pocket);
    }
    for (const h of t.holes) {
      svg.append(el("svg:circle", { cx: h.x, cy: h.y, r: h.r, class: "hole" }));
      svg.append(el("svg:text", { x: h.x, y: h.y + h.r * 2.4, class: "hole-value", text: h.value }));
    }
    for (const p of t.pins) {
      svg.append(el("svg:circle", { cx: p.x, cy: p.y, r: p.r, fill: p.colour, class: "pin" }));
    }
    this.ballLayer = el("svg:g", { class: "balls" });
    svg.append(this.ballLayer);
  }

  balls(list) {
    const r = this.setup.table.ball_radius_mm;
    this.ballLayer.replaceChildren(...list.map((b) => el("svg:g", { class: `ball ${b.state}`, "data-ball": b.id },
      el("svg:circle", { cx: b.x, cy: b.y, r: r, fill: b.colour }),
      el("svg:text", { x: b.x, y: b.y + r * 0.35, class: "ball-id", fill: dark(b.colour) ? "#fff" : "#000", text: b.id }))));
  }

  highlight(pocketId) {
    for (const p of this.svg.querySelectorAll("[data-pocket]")) {
      p.classList.toggle("chosen", p.dataset.pocket === pocketId);
    }
  }
}

// Calls announced with a sound: off (the default), a chime made here with WebAudio, or the call read
// aloud by the browser's own voice where it has one.
class Announcer {
  constructor(select) {
    this.mode = "off";
    this.select = select;
    if (!("speechSynthesis" in window)) select.querySelector("option[value=voice]")?.remove();
    select.addEventListener("change", () => { this.mode = select.value; if (this.mode !== "off") this.chime(true); });
  }

  chime(quiet = false) {
    this.ctx = this.ctx || new AudioContext();
    const now = this.ctx.currentTime;
    [880, 1318.5].forEach((freq, i) => {
      const osc = this.ctx.createOscillator();
      const gain = this.ctx.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(quiet ? 0.05 : 0.3, now + i * 0.18 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.18 + 0.6);
      osc.connect(gain).connect(this.ctx.destination);
      osc.start(now + i * 0.18);
      osc.stop(now + i * 0.18 + 0.65);
    });
  }

  announce(call) {
    if (this.mode === "chime") this.chime();
    else if (this.mode === "voice") {
      speechSynthesis.cancel();
      speechSynthesis.speak(new SpeechSynthesisUtterance(call.spoken));
    }
  }
}

// whether a "#rrggbb" colour is dark (its label is written in white)
function dark(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.4;
}

function fmtClock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// The game clock (bar billiards): the time left, counted on between states from this browser's clock.
function clockLeft(score, state, receivedAt) {
  const c = score.clock;
  if (!c || c.started_s === null) return null;
  const now = state.t_s + (state.finished ? 0 : (performance.now() - receivedAt) / 1000);
  return c.length_s - (now - c.started_s);
}

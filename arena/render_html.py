"""Self-contained HTML pages: a match replay, and a tournament report.

Pure: values in, one HTML string out. Every page carries its own CSS, JavaScript and SVG
(the suit pictures are inline symbols) and the replay's frames as embedded JSON, so it opens
from a file with the network off: nothing is fetched, no font, script or image.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.cards import Card
from arena.render_text import PLAIN, TextStyle, describe, result_text, rules_text
from arena.replay import Frame, Replay
from arena.scoring import CATEGORIES

SUIT_STYLES = ("spanish", "french")

# Cards named in a caption are marked up as ⟦7o 12c⟧ and drawn as small cards by the page.
_OPEN, _CLOSE = "\u27e6", "\u27e7"


def _mark(cards: Iterable[Card], style: TextStyle) -> str:
    cards = list(cards)
    return _OPEN + " ".join(map(str, cards)) + _CLOSE if cards else ""


def _script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


# --- replay data ---------------------------------------------------------------------------------


def _cards(cards: Iterable[Card]) -> list[str]:
    return [str(c) for c in cards]


def _pile_counts(pile: Sequence[Card]) -> list[int]:
    return [len(pile), sum(c.oro for c in pile), sum(c.seven for c in pile), int(any(c.is_velo for c in pile))]


def _highlight(frame: Frame) -> list[str]:
    out: list[str] = []
    for e in frame.events:
        if e.kind in ("play", "renuncio"):
            out.append(str(e.card))  # type: ignore[union-attr]
            out.extend(map(str, e.take))  # type: ignore[union-attr]
        elif e.kind in ("initial_capture", "escoba_en_mano", "sweep"):
            out.extend(map(str, e.cards))  # type: ignore[union-attr]
    return out


def replay_data(replay: Replay, title: str = "") -> dict[str, Any]:
    """Everything the replay page shows, as plain JSON-able values."""
    rec = replay.record
    seating = replay.seating
    frames = []
    for f in replay.frames:
        frames.append({
            "k": f.kind, "m": f.move_index, "mv": f.move, "s": f.seat, "h": f.hand, "r": f.round,
            "d": f.dealer, "t": f.turn, "st": f.stock,
            "hands": [_cards(h) for h in f.hands], "table": _cards(f.table),
            "pc": [_pile_counts(p) for p in f.piles], "e": list(f.escobas), "sc": list(f.scores),
            "txt": describe(f, replay, PLAIN, _mark), "esc": f.escoba,
            "bd": [dict(b) for b in f.breakdown] if f.breakdown is not None else None,
            "hl": _highlight(f),
        })
    hands = [{"hand": e.hand, "breakdown": [dict(b) for b in e.breakdown], "points": list(e.points),
              "totals": list(e.totals)} for e in replay.hand_scores()]
    categories = [c for c in CATEGORIES if c != "all_sevens" or replay.rules.all_sevens_bonus]
    return {
        "title": title or f"Escoba replay · seed {rec.seed}",
        "seed": rec.seed,
        "players": seating.players,
        "seats": list(rec.seats),
        "sides": list(replay.side_names()),
        "side_of": [seating.side_of(s) for s in range(seating.players)],
        "rules": replay.rules.to_dict(),
        "rules_text": rules_text(replay),
        "target": replay.rules.target,
        "result": rec.result.to_dict(),
        "result_text": result_text(replay),
        "moves": replay.moves,
        "categories": categories,
        "frames": frames,
        "hands": hands,
        "outcomes": [o.to_dict() for o in rec.outcomes],
    }


# --- shared page parts ---------------------------------------------------------------------------

_SUIT_SYMBOLS = """
<svg width="0" height="0" style="position:absolute" aria-hidden="true">
 <defs>
  <radialGradient id="g-gold" cx="40%" cy="35%" r="70%"><stop offset="0" stop-color="#ffe680"/><stop offset="1" stop-color="#d99a00"/></radialGradient>
  <symbol id="sp-o" viewBox="0 0 100 100"><circle cx="50" cy="50" r="44" fill="url(#g-gold)" stroke="#9a6a00" stroke-width="5"/><circle cx="50" cy="50" r="27" fill="none" stroke="#9a6a00" stroke-width="4"/><circle cx="50" cy="50" r="9" fill="#b8860b"/></symbol>
  <symbol id="sp-c" viewBox="0 0 100 100"><path d="M14 14 H86 C86 46 70 60 56 62 V78 C66 80 72 84 74 92 H26 C28 84 34 80 44 78 V62 C30 60 14 46 14 14 Z" fill="#d32f2f" stroke="#7f1010" stroke-width="4" stroke-linejoin="round"/><path d="M22 22 H78" stroke="#ffcdd2" stroke-width="5" stroke-linecap="round"/></symbol>
  <symbol id="sp-e" viewBox="0 0 100 100"><path d="M50 4 L60 18 L57 66 H43 L40 18 Z" fill="#cfd8e6" stroke="#1e4fa3" stroke-width="4" stroke-linejoin="round"/><rect x="22" y="64" width="56" height="9" rx="4" fill="#1e4fa3"/><rect x="45" y="72" width="10" height="17" fill="#1e4fa3"/><circle cx="50" cy="92" r="6" fill="#1e4fa3"/></symbol>
  <symbol id="sp-b" viewBox="0 0 100 100"><path d="M36 94 L30 30 C28 14 36 6 50 6 C64 6 72 14 70 30 L64 94 Z" fill="#6d9b3a" stroke="#2e5d14" stroke-width="4" stroke-linejoin="round"/><circle cx="42" cy="28" r="5" fill="#2e5d14"/><circle cx="58" cy="46" r="5" fill="#2e5d14"/><circle cx="44" cy="64" r="4" fill="#2e5d14"/><circle cx="56" cy="80" r="4" fill="#2e5d14"/></symbol>
  <symbol id="fr-o" viewBox="0 0 100 100"><path d="M50 4 L88 50 L50 96 L12 50 Z" fill="#c62828"/></symbol>
  <symbol id="fr-c" viewBox="0 0 100 100"><path d="M50 90 C22 66 6 50 6 30 C6 15 17 6 29 6 C39 6 46 12 50 20 C54 12 61 6 71 6 C83 6 94 15 94 30 C94 50 78 66 50 90 Z" fill="#c62828"/></symbol>
  <symbol id="fr-e" viewBox="0 0 100 100"><path d="M50 4 C62 22 92 38 92 60 C92 74 82 82 71 82 C63 82 57 78 54 72 C55 82 58 89 66 96 H34 C42 89 45 82 46 72 C43 78 37 82 29 82 C18 82 8 74 8 60 C8 38 38 22 50 4 Z" fill="#1b1b1b"/></symbol>
  <symbol id="fr-b" viewBox="0 0 100 100"><circle cx="50" cy="28" r="20" fill="#1b1b1b"/><circle cx="27" cy="60" r="20" fill="#1b1b1b"/><circle cx="73" cy="60" r="20" fill="#1b1b1b"/><path d="M44 50 H56 C56 74 60 86 68 96 H32 C40 86 44 74 44 50 Z" fill="#1b1b1b"/></symbol>
 </defs>
</svg>
"""

_BASE_CSS = """
:root { --felt:#1f6b43; --felt-dark:#164f31; --ink:#1d232b; --muted:#5e6b78; --paper:#fbfaf6; --line:#d9dde3;
  --accent:#c0392b; --side0:#2563eb; --side1:#d97706; --side2:#059669; --gold:#d99a00; }
* { box-sizing:border-box; }
body { margin:0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color:var(--ink);
  background:#eef1f4; }
header { padding:14px 22px 10px; background:#fff; border-bottom:1px solid var(--line); }
header h1 { margin:0 0 4px; font-size:20px; }
header .sub { color:var(--muted); font-size:13px; }
.badge { display:inline-block; padding:2px 8px; border-radius:10px; background:#eef2ff; color:#1e3a8a; font-size:12px; margin-right:6px; }
table.data { border-collapse:collapse; font-size:13px; background:#fff; }
table.data th, table.data td { padding:5px 9px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
table.data th { background:#f5f7fa; font-weight:600; color:#334; }
table.data td.l, table.data th.l { text-align:left; }
a { color:#1d4ed8; }
"""

_REPLAY_CSS = """
.wrap { display:grid; grid-template-columns:minmax(520px,1fr) 370px; gap:16px; padding:16px 22px; align-items:start; }
.felt { background: radial-gradient(ellipse at center, #268052 0%, var(--felt) 55%, var(--felt-dark) 100%);
  border-radius:18px; padding:14px; box-shadow: inset 0 0 0 6px #0f3d25, 0 4px 14px rgba(0,0,0,.18); color:#fff; }
.seats { display:flex; flex-wrap:wrap; gap:10px; justify-content:center; }
.seat { background:rgba(0,0,0,.18); border-radius:12px; padding:8px 10px; min-width:200px; border:2px solid transparent; }
.seat.turn { border-color:#ffd54f; box-shadow:0 0 12px rgba(255,213,79,.6); }
.seat.mover { border-color:#fff; }
.seat .who { font-size:13px; margin-bottom:6px; display:flex; gap:6px; align-items:center; }
.seat .who b { font-weight:600; }
.chip { font-size:11px; padding:1px 6px; border-radius:8px; background:rgba(255,255,255,.2); }
.chip.dealer { background:#ffd54f; color:#3b2f00; }
.sidedot { width:10px; height:10px; border-radius:50%; display:inline-block; }
.hand { display:flex; gap:6px; min-height:84px; align-items:center; }
.center { margin:14px 0; padding:14px; border-radius:14px; background:rgba(255,255,255,.06); border:1px dashed rgba(255,255,255,.25); }
.center .row { display:flex; gap:14px; align-items:center; }
.tablecards { display:flex; gap:8px; flex-wrap:wrap; min-height:96px; align-items:center; flex:1; }
.stock { text-align:center; font-size:12px; color:#d5eadc; }
.caption { margin-top:10px; font-size:15px; min-height:28px; display:flex; align-items:center; gap:4px; flex-wrap:wrap; }
.caption .num { opacity:.7; margin-right:4px; }
.escoba { background:#ffd54f; color:#3b2f00; font-weight:700; padding:2px 8px; border-radius:8px; margin-left:8px; letter-spacing:.5px; }
.card { width:58px; height:84px; border-radius:7px; background:var(--paper); color:#222; position:relative;
  box-shadow:0 1px 3px rgba(0,0,0,.45); border:1px solid #cfc8b8; flex:none; }
.card .rk { position:absolute; top:3px; left:5px; font-weight:700; font-size:15px; line-height:1; }
.card .rk2 { position:absolute; bottom:3px; right:5px; font-weight:700; font-size:15px; line-height:1; transform:rotate(180deg); }
.card svg.pip { position:absolute; left:10px; top:20px; width:38px; height:38px; }
.card .fig { position:absolute; bottom:19px; width:100%; text-align:center; font-size:8px; letter-spacing:.5px; text-transform:uppercase; color:#555; }
.card.hl { outline:3px solid #ffd54f; outline-offset:1px; }
.card.back { background: repeating-linear-gradient(45deg, #8e1b1b 0 6px, #a52a2a 6px 12px); border:3px solid #f3e9d2; }
.card.mini { width:30px; height:42px; border-radius:4px; display:inline-block; vertical-align:middle; }
.card.mini .rk { font-size:11px; top:2px; left:3px; } .card.mini .rk2, .card.mini .fig { display:none; }
.card.mini svg.pip { width:18px; height:18px; left:6px; top:17px; }
.s-o .rk, .s-o .rk2 { color:#a86f00; } .s-c .rk, .s-c .rk2 { color:#c62828; }
.s-e .rk, .s-e .rk2 { color:#1e4fa3; } .s-b .rk, .s-b .rk2 { color:#2e7d32; }
.french.s-o .rk, .french.s-o .rk2, .french.s-c .rk, .french.s-c .rk2 { color:#c62828; }
.french.s-e .rk, .french.s-e .rk2, .french.s-b .rk, .french.s-b .rk2 { color:#1b1b1b; }
.nocards { color:#cfe3d6; font-size:13px; font-style:italic; }
aside .panel { background:#fff; border-radius:12px; padding:12px 14px; margin-bottom:14px; box-shadow:0 1px 3px rgba(0,0,0,.08); }
aside h2 { font-size:14px; margin:0 0 8px; color:#334; }
.scoreboard .side { display:flex; align-items:center; justify-content:space-between; padding:6px 0; border-bottom:1px solid var(--line); }
.scoreboard .side:last-child { border-bottom:none; }
.scoreboard .name { font-weight:600; font-size:14px; }
.scoreboard .pile { color:var(--muted); font-size:12px; }
.scoreboard .side-score { font-size:26px; font-weight:700; font-variant-numeric:tabular-nums; }
.scoreboard .winner .name::after { content:" \\2605"; color:var(--gold); }
.target { color:var(--muted); font-size:12px; }
.breakdown table, .hands { width:100%; } aside table.data th, aside table.data td { padding:4px 6px; } aside table.data th { white-space:normal; } aside .panel { overflow-x:auto; }
.hands tr.cur td { background:#fff8d6; }
.hands tr { cursor:pointer; }
.controls { position:sticky; top:0; z-index:5; background:#fff; border-bottom:1px solid var(--line); box-shadow:0 2px 6px rgba(0,0,0,.06); padding:10px 22px; display:flex; gap:10px; align-items:center; flex-wrap:wrap; }
.controls button { font-size:15px; min-width:38px; height:32px; border-radius:8px; border:1px solid #c4cbd4; background:#f8fafc; cursor:pointer; }
.controls button:hover { background:#eef2f7; }
.controls button.primary { background:#1d4ed8; color:#fff; border-color:#1d4ed8; min-width:80px; }
.controls input[type=range] { flex:1; min-width:200px; }
.controls .pos { font-variant-numeric:tabular-nums; font-size:13px; color:#334; min-width:170px; }
.controls select { height:30px; border-radius:6px; border:1px solid #c4cbd4; }
.controls label { font-size:12px; color:var(--muted); }
.final { background:#0f3d25; color:#fff; padding:8px 12px; border-radius:10px; margin-top:10px; font-weight:600; }
@media (max-width: 900px) { .wrap { grid-template-columns:1fr; } }
"""

_REPLAY_JS = r"""
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("replay-data").textContent);
  const F = D.frames;
  const $ = (id) => document.getElementById(id);
  const SIDE_COLORS = ["var(--side0)", "var(--side1)", "var(--side2)"];
  const FR_RANK = {1: "A", 10: "J", 11: "Q", 12: "K"};
  const FIG = {10: "sota", 11: "caballo", 12: "rey"};
  const CAT = {escobas: "Escobas", cards: "Most cards", oros: "Most oros", velo: "Siete de oros",
               sevens: "Sevens", all_sevens: "All four sevens"};
  const COUNT = {cards: "n_cards", oros: "n_oros", sevens: "n_sevens"};
  let pos = 0, timer = null, view = "all", suits = "spanish";

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function parseCard(t) { return {rank: parseInt(t, 10), suit: t.charAt(t.length - 1)}; }
  function rankText(rank) { return suits === "french" ? (FR_RANK[rank] || String(rank)) : String(rank); }
  function svgUse(id, cls) {
    const ns = "http://www.w3.org/2000/svg";
    const s = document.createElementNS(ns, "svg");
    s.setAttribute("class", cls); s.setAttribute("viewBox", "0 0 100 100");
    const u = document.createElementNS(ns, "use");
    u.setAttribute("href", "#" + id);
    s.appendChild(u);
    return s;
  }
  function cardEl(text, opts) {
    opts = opts || {};
    const c = parseCard(text);
    const e = el("div", "card s-" + c.suit + (suits === "french" ? " french" : "") + (opts.mini ? " mini" : "") + (opts.hl ? " hl" : ""));
    e.title = text;
    e.dataset.card = text;
    e.appendChild(el("span", "rk", rankText(c.rank)));
    e.appendChild(svgUse((suits === "french" ? "fr-" : "sp-") + c.suit, "pip"));
    if (!opts.mini) {
      e.appendChild(el("span", "rk2", rankText(c.rank)));
      if (suits === "spanish" && FIG[c.rank]) e.appendChild(el("span", "fig", FIG[c.rank]));
    }
    return e;
  }
  function backEl() { return el("div", "card back"); }

  function caption(box, f) {
    box.textContent = "";
    if (f.mv !== null && f.m !== null) box.appendChild(el("span", "num", (f.m + 1) + "."));
    const parts = f.txt.split(/(\u27e6[^\u27e7]*\u27e7)/);
    for (const p of parts) {
      if (!p) continue;
      if (p.charAt(0) === "\u27e6") {
        for (const t of p.slice(1, -1).split(" ")) box.appendChild(cardEl(t, {mini: true}));
      } else {
        box.appendChild(el("span", null, p));
      }
    }
    if (f.esc) box.appendChild(el("span", "escoba", f.esc > 1 ? f.esc + " ESCOBAS!" : "ESCOBA!"));
  }

  function seatPanel(f, s) {
    const p = el("div", "seat");
    p.dataset.seat = s;
    if (f.t === s) p.classList.add("turn");
    if (f.s === s) p.classList.add("mover");
    const who = el("div", "who");
    const dot = el("span", "sidedot"); dot.style.background = SIDE_COLORS[D.side_of[s] % 3];
    who.appendChild(dot);
    who.appendChild(el("b", null, D.seats[s]));
    who.appendChild(el("span", "chip", "seat " + s));
    if (f.d === s) who.appendChild(el("span", "chip dealer", "dealer"));
    if (f.t === s) who.appendChild(el("span", "chip", "to play"));
    p.appendChild(who);
    const hand = el("div", "hand");
    const cards = f.hands[s];
    const hidden = view !== "all" && String(s) !== view;
    if (!cards.length) hand.appendChild(el("span", "nocards", "no cards"));
    for (const t of cards) hand.appendChild(hidden ? backEl() : cardEl(t));
    p.appendChild(hand);
    return p;
  }

  function renderBreakdown(box, bd, totals, title) {
    box.textContent = "";
    box.appendChild(el("h2", null, title));
    if (!bd) { box.appendChild(el("div", "target", "Shown when a hand is scored.")); return; }
    const t = el("table", "data");
    const head = el("tr"); head.appendChild(el("th", "l", ""));
    D.sides.forEach((n) => head.appendChild(el("th", null, n)));
    t.appendChild(head);
    for (const c of D.categories) {
      const tr = el("tr"); tr.appendChild(el("td", "l", CAT[c]));
      bd.forEach((b) => {
        let v = String(b[c] || 0);
        if (c === "sevens" && b.primera !== undefined) v += " (primera " + b.primera + ")";
        else if (COUNT[c]) v += " (" + b[COUNT[c]] + ")";
        tr.appendChild(el("td", null, v));
      });
      t.appendChild(tr);
    }
    const tot = el("tr"); tot.appendChild(el("th", "l", "Hand total"));
    bd.forEach((b) => tot.appendChild(el("th", null, String(b.total))));
    t.appendChild(tot);
    if (totals) {
      const m = el("tr"); m.appendChild(el("th", "l", "Match score"));
      totals.forEach((v) => m.appendChild(el("th", null, String(v))));
      t.appendChild(m);
    }
    box.appendChild(t);
  }

  function lastScored(i) {
    for (let j = i; j >= 0; j--) if (F[j].k === "hand_score") return F[j];
    return null;
  }

  function render() {
    const f = F[pos];
    const n = D.players;
    const top = $("seats-top"), bottom = $("seats-bottom");
    top.textContent = ""; bottom.textContent = "";
    const half = Math.ceil(n / 2);
    for (let s = n - 1; s >= half; s--) top.appendChild(seatPanel(f, s));
    for (let s = 0; s < half; s++) bottom.appendChild(seatPanel(f, s));
    const tc = $("table-cards"); tc.textContent = "";
    const hl = new Set(f.hl);
    if (!f.table.length) tc.appendChild(el("span", "nocards", "the table is empty"));
    for (const t of f.table) tc.appendChild(cardEl(t, {hl: hl.has(t)}));
    $("stock-count").textContent = String(f.st);
    $("stock-card").style.visibility = f.st ? "visible" : "hidden";
    caption($("caption"), f);
    $("hand-info").textContent = "Hand " + (f.h + 1) + " · round " + (f.r + 1);
    // scoreboard
    const sb = $("scoreboard"); sb.textContent = "";
    const over = f.k === "match_end" || f.k === "forfeit";
    D.sides.forEach((name, side) => {
      const row = el("div", "side");
      if (over && D.result.winner === side) row.classList.add("winner");
      const left = el("div");
      const nm = el("div", "name"); const dot = el("span", "sidedot"); dot.style.background = SIDE_COLORS[side % 3];
      nm.appendChild(dot); nm.appendChild(document.createTextNode(" " + name));
      left.appendChild(nm);
      const pc = f.pc[side];
      left.appendChild(el("div", "pile", "this hand: " + pc[0] + " cards · " + pc[1] + " oros · " + pc[2] + (pc[2] === 1 ? " seven" : " sevens") +
        (pc[3] ? " · velo" : "") + (f.e[side] ? " · " + f.e[side] + " escoba" + (f.e[side] > 1 ? "s" : "") : "")));
      row.appendChild(left);
      const sc = el("div", "side-score", String(f.sc[side])); sc.dataset.side = side;
      row.appendChild(sc);
      sb.appendChild(row);
    });
    $("final").style.display = over ? "block" : "none";
    const ls = lastScored(pos);
    renderBreakdown($("breakdown"), ls ? ls.bd : null, ls ? ls.sc : null,
      ls ? "Hand " + (ls.h + 1) + " score" + (ls === f ? "" : " (last scored)") : "Hand score");
    for (const tr of document.querySelectorAll("#hands-body tr")) tr.classList.toggle("cur", Number(tr.dataset.hand) === f.h);
    $("slider").value = String(pos);
    const mv = f.m === null ? 0 : f.m + 1;
    $("pos").textContent = "frame " + (pos + 1) + "/" + F.length + " · move " + mv + "/" + D.moves;
    $("play").textContent = timer ? "❚❚ Pause" : "▶ Play";
    document.body.dataset.frame = String(pos);
  }

  function go(i) { pos = Math.max(0, Math.min(F.length - 1, i)); render(); }
  function stop() { if (timer) { clearInterval(timer); timer = null; } }
  function play() {
    if (timer) { stop(); render(); return; }
    if (pos >= F.length - 1) pos = 0;
    timer = setInterval(() => { if (pos >= F.length - 1) { stop(); render(); } else go(pos + 1); }, Number($("speed").value));
    render();
  }
  function handStart(h) { for (let i = 0; i < F.length; i++) if (F[i].h === h) return i; return 0; }
  function nextHand(dir) {
    const h = F[pos].h + dir;
    if (h < 0) return go(0);
    if (h > F[F.length - 1].h) return go(F.length - 1);
    go(handStart(h));
  }

  function build() {
    document.title = D.title;
    $("title").textContent = D.title;
    $("subtitle").textContent = D.seats.map((n, s) => "seat " + s + " " + n).join(" · ") + " — " + D.rules_text;
    $("result").textContent = D.result_text;
    $("final").textContent = "Final: " + D.result_text;
    $("target").textContent = "First to " + D.target + " points";
    const slider = $("slider"); slider.max = String(F.length - 1);
    slider.addEventListener("input", () => { stop(); go(Number(slider.value)); });
    $("first").addEventListener("click", () => { stop(); go(0); });
    $("prev").addEventListener("click", () => { stop(); go(pos - 1); });
    $("next").addEventListener("click", () => { stop(); go(pos + 1); });
    $("last").addEventListener("click", () => { stop(); go(F.length - 1); });
    $("prev-hand").addEventListener("click", () => { stop(); nextHand(-1); });
    $("next-hand").addEventListener("click", () => { stop(); nextHand(1); });
    $("play").addEventListener("click", play);
    $("speed").addEventListener("change", () => { if (timer) { stop(); play(); } });
    const vs = $("view");
    D.seats.forEach((n, s) => { const o = el("option", null, "seat " + s + " (" + n + ") only"); o.value = String(s); vs.appendChild(o); });
    vs.addEventListener("change", () => { view = vs.value; render(); });
    $("suits").addEventListener("change", () => { suits = $("suits").value; render(); });
    // hand-by-hand table
    const hb = $("hands-body");
    const hh = $("hands-head");
    hh.appendChild(el("th", "l", "Hand"));
    D.sides.forEach((n) => hh.appendChild(el("th", null, n)));
    for (const h of D.hands) {
      const tr = el("tr"); tr.dataset.hand = h.hand;
      tr.appendChild(el("td", "l", String(h.hand + 1)));
      h.points.forEach((p, i) => tr.appendChild(el("td", null, "+" + p + " → " + h.totals[i])));
      tr.addEventListener("click", () => { stop(); go(handStart(h.hand)); });
      hb.appendChild(tr);
    }
    document.addEventListener("keydown", (ev) => {
      if (ev.target && ev.target.tagName === "SELECT") return;
      const k = ev.key;
      if (k === "ArrowRight" || k === "n") { stop(); go(pos + 1); }
      else if (k === "ArrowLeft" || k === "p") { stop(); go(pos - 1); }
      else if (k === "ArrowDown") { stop(); nextHand(1); }
      else if (k === "ArrowUp") { stop(); nextHand(-1); }
      else if (k === "Home") { stop(); go(0); }
      else if (k === "End") { stop(); go(F.length - 1); }
      else if (k === " ") { play(); }
      else return;
      ev.preventDefault();
    });
    render();
  }
  build();
})();
"""

_REPLAY_BODY = """
<header>
  <h1 id="title"></h1>
  <div class="sub" id="subtitle"></div>
  <div class="sub" style="margin-top:4px"><span class="badge">verified</span><span id="result"></span></div>
</header>
<div class="controls">
  <button id="first" title="Start (Home)">|◀</button>
  <button id="prev-hand" title="Previous hand (↑)">◀◀</button>
  <button id="prev" title="Step back (←)">◀</button>
  <button id="play" class="primary" title="Play / pause (space)">▶ Play</button>
  <button id="next" title="Step forward (→)">▶</button>
  <button id="next-hand" title="Next hand (↓)">▶▶</button>
  <button id="last" title="End (End)">▶|</button>
  <input type="range" id="slider" min="0" max="0" value="0" aria-label="move">
  <span class="pos" id="pos"></span>
  <label>speed <select id="speed"><option value="250">fast</option><option value="700" selected>normal</option><option value="1500">slow</option></select></label>
  <label>view <select id="view"><option value="all">all hands</option></select></label>
  <label>cards <select id="suits"><option value="spanish">Spanish suits</option><option value="french">French suits</option></select></label>
</div>
<div class="wrap">
  <main>
    <div class="felt">
      <div class="seats" id="seats-top"></div>
      <div class="center">
        <div class="row">
          <div class="tablecards" id="table-cards"></div>
          <div class="stock"><div class="card back" id="stock-card" style="margin:0 auto 4px"></div><span id="stock-count"></span> in stock</div>
        </div>
        <div class="caption" id="caption"></div>
      </div>
      <div class="seats" id="seats-bottom"></div>
    </div>
  </main>
  <aside>
    <div class="panel scoreboard">
      <h2>Score <span class="target" id="target"></span></h2>
      <div class="target" id="hand-info"></div>
      <div id="scoreboard"></div>
      <div class="final" id="final" style="display:none"></div>
    </div>
    <div class="panel breakdown" id="breakdown"></div>
    <div class="panel">
      <h2>Hand by hand</h2>
      <table class="data hands" style="width:100%"><thead><tr id="hands-head"></tr></thead><tbody id="hands-body"></tbody></table>
    </div>
  </aside>
</div>
"""


def _page(title: str, css: str, body: str, script: str = "", data: Any = None) -> str:
    data_block = ""
    if data is not None:
        data_block = f'<script type="application/json" id="replay-data">{_script_json(data)}</script>\n'
    js = f"<script>{script}</script>\n" if script else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # Nothing may be fetched: the policy makes a mistake here fail loudly instead of leaking.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{_e(title)}</title>\n<style>{_BASE_CSS}{css}</style>\n</head>\n<body>\n"
        f"{_SUIT_SYMBOLS}{body}\n{data_block}{js}</body>\n</html>\n"
    )


def render_replay_html(replay: Replay, title: str = "", suits: str = "spanish") -> str:
    """The replay page of one verified match."""
    if suits not in SUIT_STYLES:
        raise ValueError(f"suits: expected one of {', '.join(SUIT_STYLES)}, got {suits!r}")
    data = replay_data(replay, title)
    script = _REPLAY_JS
    if suits == "french":
        script = script.replace('suits = "spanish";', 'suits = "french";', 1)
        body = _REPLAY_BODY.replace('<option value="french">', '<option value="french" selected>')
    else:
        body = _REPLAY_BODY
    return _page(data["title"], _REPLAY_CSS, body, script, data)


# --- the tournament report -------------------------------------------------------------------------

_REPORT_CSS = """
main { padding:16px 22px; max-width:1200px; }
section { background:#fff; border-radius:12px; padding:14px 16px; margin-bottom:16px; box-shadow:0 1px 3px rgba(0,0,0,.08); overflow-x:auto; }
section h2 { margin:0 0 10px; font-size:16px; }
.note { color:var(--muted); font-size:12px; margin-top:6px; }
td.refused { color:var(--accent); white-space:normal; text-align:left; }
td.win { font-weight:600; }
.cross td.self { background:#f0f0f0; }
.cross td.good { background:#e7f6ec; } .cross td.bad { background:#fdecea; }
svg.plot text { font-family: system-ui, "DejaVu Sans", sans-serif; font-size:12px; fill:#334; }
"""


def ratings_plot_svg(entries: Sequence[tuple[str, float | None, float | None, str]], width: int = 720) -> str:
    """Elo with its 95% interval per bot as a dot-and-whisker plot (inline SVG).

    ``entries``: (name, elo, ci95, status) best first; a bot without a finite rating is listed
    with a word on why (its status) instead of a dot."""
    row_h, left, right, top = 26, 170, 90, 28
    height = top + row_h * max(1, len(entries)) + 34
    finite = [(e, c or 0.0) for _, e, c, _ in entries if e is not None and math.isfinite(e)]
    if finite:
        lo = min(e - c for e, c in finite)
        hi = max(e + c for e, c in finite)
    else:
        lo, hi = -100.0, 100.0
    if hi - lo < 50:
        mid = (hi + lo) / 2
        lo, hi = mid - 25, mid + 25
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    span = width - left - right

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * span

    parts = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="ratings with 95% intervals">']
    step = _nice_step((hi - lo) / 6)
    tick = math.ceil(lo / step) * step
    axis_y = height - 26
    while finite and tick <= hi:
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 10}" x2="{tx:.1f}" y2="{axis_y}" stroke="#e3e7ec"/>')
        parts.append(f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{tick:+.0f}</text>')
        tick += step
    if finite and lo < 0 < hi:
        parts.append(f'<line x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{axis_y}" stroke="#9aa5b1" stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{left}" y="14">Elo (0 = field average), with 95% intervals</text>')
    for i, (name, elo, ci, note) in enumerate(entries):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{_e(name)}</text>')
        if elo is None or not math.isfinite(elo):
            label = _UNRATED.get(note, "no finite rating (see the notes)")
            parts.append(f'<text x="{left + 4}" y="{y + 4:.1f}" fill="#8a4b00">{_e(label)}</text>')
            continue
        if ci:
            parts.append(f'<line x1="{x(elo - ci):.1f}" y1="{y:.1f}" x2="{x(elo + ci):.1f}" y2="{y:.1f}" stroke="#1d4ed8" stroke-width="3" stroke-linecap="round" opacity="0.55"/>')
            for end in (elo - ci, elo + ci):
                parts.append(f'<line x1="{x(end):.1f}" y1="{y - 6:.1f}" x2="{x(end):.1f}" y2="{y + 6:.1f}" stroke="#1d4ed8" stroke-width="2"/>')
        label = f"{elo:+.0f}" + (f" ± {ci:.0f}" if ci else "")
        parts.append(f'<circle cx="{x(elo):.1f}" cy="{y:.1f}" r="6" fill="#1d4ed8"><title>{_e(name)}: {label}</title></circle>')
        parts.append(f'<text x="{x(elo + (ci or 0)) + 8:.1f}" y="{y + 4:.1f}" fill="#1d4ed8">{_e(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


_UNRATED = {
    "unbounded_above": "rating unbounded above: won every game (see the notes)",
    "unbounded_below": "rating unbounded below: lost every game (see the notes)",
    "separated": "rating unbounded: results perfectly ordered (see the notes)",
}


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], left: Iterable[int] = (0,), cls: str = "data",
           raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw`` (then they are trusted HTML fragments)."""
    left = set(left)
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f'<th class="{"l" if i in left else ""}">{_e(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            out.append(f'<td class="{"l" if i in left else ""}">{cell if raw else _e(cell)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def render_report_html(
    title: str,
    summary: str,
    standings_headers: Sequence[str],
    standings_rows: Sequence[Sequence[Any]],
    crosstable_headers: Sequence[str],
    crosstable_rows: Sequence[Sequence[str]],
    ratings: Sequence[tuple[str, float | None, float | None, str]],
    matches: Sequence[Mapping[str, Any]],
    notes: Sequence[str] = (),
) -> str:
    """The tournament report: standings, crosstable, ratings plot, and every match with a link
    to its replay page. ``matches`` items: id, seats, sides, score, winner, reason, hands,
    failures, href (or None) and refused (the verification error, or None)."""
    parts = [f"<header><h1>{_e(title)}</h1><div class=\"sub\">{_e(summary)}</div></header><main>"]
    parts.append("<section><h2>Standings</h2>")
    parts.append(_table(standings_headers, [[str(c) for c in r] for r in standings_rows], left=(1, len(standings_headers) - 1)))
    for note in notes:
        parts.append(f'<div class="note">Note: {_e(note)}</div>')
    parts.append("</section>")
    parts.append("<section><h2>Ratings</h2>")
    parts.append(ratings_plot_svg(ratings))
    parts.append('<div class="note">Bradley-Terry fit on the Elo scale over every match; the bar is the 95% interval.</div>')
    parts.append("</section>")
    parts.append("<section><h2>Crosstable</h2>")
    parts.append(_crosstable(crosstable_headers, crosstable_rows))
    parts.append('<div class="note">Score of the row against the column: wins count 1, draws 1/2, out of the games played.</div>')
    parts.append("</section>")
    parts.append(f"<section><h2>Matches ({len(matches)})</h2>")
    rows = []
    refused = 0
    for m in matches:
        if m.get("refused"):
            refused += 1
            link = f'<td class="refused" colspan="1">refused: {_e(m["refused"])}</td>'
        else:
            link = f'<td class="l"><a href="{_e(m["href"])}">replay</a></td>'
        winner = m.get("winner")
        sides = " vs ".join(_e(s) if i != winner else f"<b>{_e(s)}</b>" for i, s in enumerate(m["sides"]))
        rows.append(
            f'<tr><td class="l">{_e(m["id"])}</td><td class="l">{sides}</td>'
            f'<td>{_e(m["score"])}</td><td class="l">{_e(m["reason"])}</td><td>{_e(m["hands"])}</td>'
            f'<td class="l">{_e(m.get("failures") or "-")}</td>{link}</tr>'
        )
    parts.append('<table class="data" id="matches"><thead><tr><th class="l">match</th><th class="l">sides (winner in bold)</th>'
                 '<th>score</th><th class="l">ended by</th><th>hands</th><th class="l">bot failures</th>'
                 '<th class="l">replay</th></tr></thead><tbody>')
    parts.extend(rows)
    parts.append("</tbody></table>")
    if refused:
        parts.append(f'<div class="note" style="color:var(--accent)">{refused} record(s) did not replay to their '
                     "recorded result and have no replay.</div>")
    parts.append("</section></main>")
    return _page(title, _REPORT_CSS, "".join(parts))


def _crosstable(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ['<table class="data cross"><thead><tr>']
    out += [f'<th class="{"l" if i == 0 else ""}">{_e(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for r, row in enumerate(rows):
        out.append("<tr>")
        for i, cell in enumerate(row):
            cls = "l" if i == 0 else ""
            if i == r + 1:
                cls = "self"
            elif 0 < i < len(row) - 1 and "/" in cell:
                won, games = cell.split("/")
                try:
                    frac = float(won) / float(games)
                    cls = "good" if frac > 0.5 else "bad" if frac < 0.5 else ""
                except (ValueError, ZeroDivisionError):
                    pass
            out.append(f'<td class="{cls}">{_e(cell)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


__all__ = ["SUIT_STYLES", "replay_data", "render_replay_html", "render_report_html", "ratings_plot_svg"]

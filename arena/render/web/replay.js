// The replay page's script. Its options come from a JSON island in the page
// (<script type="application/json" id="replay-config">), and its match either from a second
// island ("replay-data", a page of its own) or, in a report's one replay page, from the data
// file its address names (replay.html#NAME loads data/NAME.js, which calls escobaReplayData).
// Every string from a record is put on the page with textContent, never as HTML. The data's
// keys, and the labels and sentences it brings (so that none is written here a second time),
// are documented in docs/REPLAY.md.
(function () {
  "use strict";
  // The one version of the data this script reads: any other may mean something else by the
  // same keys, so it is refused rather than drawn.
  const SCHEMA_VERSION = 2;
  const $ = (id) => document.getElementById(id);
  const CONFIG = JSON.parse($("replay-config").textContent);

  function refuse(title, why, mark) {
    document.body.dataset.refused = mark;
    document.title = "Escoba replay: " + mark.replace("_", " ");
    $("title").textContent = title;
    $("subtitle").textContent = why;
    for (const part of document.querySelectorAll(".controls, .wrap")) part.style.display = "none";
  }

  function start(D) {
    if (D === null || typeof D !== "object" || D.schema_version !== SCHEMA_VERSION) {
      const found = D !== null && typeof D === "object" && "schema_version" in D ? "version " + JSON.stringify(D.schema_version) : "no version";
      refuse("This replay cannot be shown", "Its data has " + found + "; this page reads version " + SCHEMA_VERSION + " (docs/REPLAY.md).",
        "schema_version");
      return;
    }
    show(D);
  }

  // --- the frames, folded from the verified events as arena/match/replay.py's board does ------

  // Events that start a new frame; the others (a seat's dealt cards, an escoba) belong to the
  // frame of the event they follow.
  const PRIMARY = new Set(["deal", "initial_capture", "escoba_en_mano", "play", "renuncio", "sweep", "hand_score", "match_end"]);

  function frames(D) {
    const n = D.players, sides = D.sides.length, order = D.card_order;
    const board = {hands: [], table: [], piles: [], escobas: [], scores: [], hand: 0, round: 0, dealer: 0, stock: 0, breakdown: null};
    for (let s = 0; s < n; s++) board.hands.push([]);
    for (let s = 0; s < sides; s++) { board.piles.push([]); board.escobas.push(0); board.scores.push(0); }
    const out = [];
    const drop = (list, card) => { const i = list.indexOf(card); if (i >= 0) list.splice(i, 1); };
    function apply(e) {
      const t = e.type;
      if (t === "deal") {
        board.round = e.round; board.dealer = e.dealer; board.stock = e.stock;
        if (e.round === 0) {
          board.hand = e.hand; board.table = e.table.slice();
          board.piles = board.piles.map(() => []); board.escobas = board.escobas.map(() => 0);
        }
      } else if (t === "cards") {
        board.hands[e.seat] = e.cards.slice();
      } else if (t === "initial_capture") {
        for (const c of e.cards) drop(board.table, c);
        board.piles[D.side_of[e.seat]].push(...e.cards);
      } else if (t === "escoba_en_mano") {
        board.hands[e.seat] = [];
        board.piles[D.side_of[e.seat]].push(...e.cards);
      } else if (t === "play" || t === "renuncio") {
        if (t === "play") drop(board.hands[e.seat], e.card);
        if (t === "renuncio" || e.take.length) {
          for (const c of (t === "renuncio" ? [e.card, ...e.take] : e.take)) drop(board.table, c);
          board.piles[D.side_of[e.seat]].push(e.card, ...e.take);
        } else {
          let i = 0;
          while (i < board.table.length && order[board.table[i]] <= order[e.card]) i++;
          board.table.splice(i, 0, e.card);
        }
      } else if (t === "escoba") {
        board.escobas[e.side] += 1;
      } else if (t === "sweep") {
        if (e.side !== null) { board.piles[e.side].push(...e.cards); board.table = []; }
      } else if (t === "hand_score") {
        board.scores = e.totals.slice(); board.breakdown = e.breakdown;
      }
    }
    function pile(cards) {
      let oros = 0, sevens = 0, velo = false;
      for (const c of cards) {
        const suit = c.charAt(c.length - 1), rank = parseInt(c, 10);
        if (suit === "o") oros++;
        if (rank === 7) { sevens++; if (suit === "o") velo = true; }
      }
      return {cards: cards.length, oros: oros, sevens: sevens, velo: velo};
    }
    function highlight(group) {
      const cards = [];
      for (const e of group) {
        if (e.type === "play" || e.type === "renuncio") cards.push(e.card, ...e.take);
        else if (e.type === "initial_capture" || e.type === "escoba_en_mano" || e.type === "sweep") cards.push(...e.cards);
      }
      return cards;
    }
    function frame(kind, group, index, move, seat, turn) {
      const escoba = group.filter((e) => e.type === "escoba").length;
      const f = {kind: kind, move_index: index, move: move, seat: seat, hand: board.hand, round: board.round,
        dealer: board.dealer, turn: turn, stock: board.stock, hands: board.hands.map((h) => h.slice()),
        table: board.table.slice(), piles: board.piles.map(pile), escobas: board.escobas.slice(),
        scores: board.scores.slice(), escoba: escoba, escoba_text: escoba ? D.captions.escobas[Math.min(escoba, D.captions.escobas.length) - 1] : null,
        breakdown: board.breakdown, highlight: highlight(group), events: group};
      f.caption = caption(D, f);
      out.push(f);
    }
    let from = 0;
    D.steps.forEach((step, i) => {
      const [end, turn, seat, move] = step;
      const index = i === 0 ? null : i - 1;
      const groups = [];
      for (const e of D.events.slice(from, end)) {
        if (PRIMARY.has(e.type) || !groups.length) groups.push([e]);
        else groups[groups.length - 1].push(e);
      }
      from = end;
      if (!groups.length) groups.push([]);  // a move with no visible effect: a declined renuncio
      groups.forEach((group, g) => {
        board.breakdown = null;
        for (const e of group) apply(e);
        const first = g === 0 && move !== null;
        frame(group.length ? group[0].type : "pass", group, index, first ? move : null, first ? seat : null,
          g === groups.length - 1 ? turn : null);
      });
    });
    if (!D.events.some((e) => e.type === "match_end")) {
      frame("forfeit", [], D.moves ? D.moves - 1 : null, null, null, null);
    }
    return out;
  }

  // What happened in a frame, as parts: text, or a list of cards drawn as small cards. The
  // sentence is the one the terminal replay says (arena/render/text.py, CAPTIONS), filled here.
  function caption(D, f) {
    const C = D.captions, e = f.events[0];
    let key = "", fields = {};
    if (e && e.type === "deal") {
      if (e.round === 0) { key = "deal"; fields = {hand: f.hand + 1, dealer: C.seats[f.dealer], table: e.table}; }
      else { key = "round"; fields = {round: e.round + 1, hand: f.hand + 1, stock: f.stock}; }
    } else if (e && (e.type === "initial_capture" || e.type === "escoba_en_mano")) {
      key = e.type; fields = {seat: C.seats[e.seat], cards: e.cards};
    } else if (e && e.type === "play") {
      key = e.take.length ? "capture" : "trail"; fields = {seat: C.seats[e.seat], card: [e.card], take: e.take};
    } else if (e && e.type === "renuncio") {
      key = e.take.length ? "renuncio" : "renuncio_alone"; fields = {seat: C.seats[e.seat], card: [e.card], take: e.take};
    } else if (f.kind === "pass") {
      key = f.seat !== null ? "pass" : "pass_nobody"; fields = {seat: f.seat !== null ? C.seats[f.seat] : ""};
    } else if (e && e.type === "sweep") {
      key = !e.cards.length ? "sweep_empty" : e.side === null ? "sweep_nobody" : "sweep";
      fields = {cards: e.cards, side: e.side === null ? "" : C.sides[e.side]};
    } else if (e && e.type === "hand_score") {
      key = "hand_score";
      fields = {hand: f.hand + 1, points: e.points.map((p, s) => C.texts.hand_score_side.replace(/\{(\w+)\}/g,
        (m, name) => name === "side" ? C.sides[s] : String(p))).join(", ")};
    } else if (f.kind === "match_end" || f.kind === "forfeit") {
      key = "match_end"; fields = {result: D.result_text};
    }
    if (!key) return [f.kind];
    const parts = [];
    let text = "";
    for (const piece of C.texts[key].split(/(\{\w+\})/)) {
      const name = /^\{(\w+)\}$/.test(piece) ? piece.slice(1, -1) : null;
      const value = name === null ? piece : fields[name];
      if (Array.isArray(value)) {
        if (text) parts.push(text);
        text = "";
        if (value.length) parts.push(value);
      } else {
        text += String(value);
      }
    }
    if (text) parts.push(text);
    return parts;
  }

  function show(D) {
  const F = frames(D);
  const NOTES = new Map(D.notes || []);  // move index -> the bot's notes, escaped by the arena
  const LOGS = new Map();  // move index -> the stderr lines read while it was awaited, escaped by the arena
  for (const [move, seat, t, text] of D.stderr || []) {
    if (!LOGS.has(move)) LOGS.set(move, []);
    LOGS.get(move).push([seat, t, text]);
  }
  window.escobaReplay = {frames: F};  // for the tests, which compare the frames with the terminal's
  const SIDE_COLORS = ["var(--side0)", "var(--side1)", "var(--side2)"];
  const STYLES = {};
  for (const style of D.suits.styles) STYLES[style.key] = style;
  let pos = 0, timer = null, view = "all", suits = CONFIG.suits;
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function parseCard(t) { return {rank: parseInt(t, 10), suit: t.charAt(t.length - 1)}; }
  function rankText(rank) { return STYLES[suits].ranks[rank] || String(rank); }
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
    const style = STYLES[suits];
    // The style's key is also a class of the card: replay.css colours French ranks by it.
    const e = el("div", "card s-" + c.suit + " " + style.key + (opts.mini ? " mini" : "") + (opts.hl ? " hl" : ""));
    e.title = text;
    e.dataset.card = text;
    e.appendChild(el("span", "rk", rankText(c.rank)));
    e.appendChild(svgUse(style.symbols + "-" + c.suit, "pip"));
    if (!opts.mini) {
      e.appendChild(el("span", "rk2", rankText(c.rank)));
      if (style.figures && D.suits.figures[c.rank]) e.appendChild(el("span", "fig", D.suits.figures[c.rank]));
    }
    return e;
  }
  function backEl() { return el("div", "card back"); }

  function caption(box, f) {
    box.textContent = "";
    if (f.move !== null && f.move_index !== null) box.appendChild(el("span", "num", (f.move_index + 1) + "."));
    // The caption's parts: text, or a list of cards drawn as small cards.
    for (const part of f.caption) {
      if (Array.isArray(part)) {
        for (const t of part) box.appendChild(cardEl(t, {mini: true}));
      } else if (part) {
        box.appendChild(el("span", null, part));
      }
    }
    if (f.escoba_text) box.appendChild(el("span", "escoba", f.escoba_text));
    analysisNote(box, f);
  }

  // arena analyze's word on the move of this frame, when the page has its island (a list of
  // analysed moves, numbered from 1: docs/ANALYSIS.md).
  const ANALYSED = new Map();
  if ($("replay-analysis")) for (const m of JSON.parse($("replay-analysis").textContent)) ANALYSED.set(m.move - 1, m);
  function analysisNote(box, f) {
    const m = f.move !== null ? ANALYSED.get(f.move_index) : undefined;
    if (!m) return;
    const best = m.best !== m.played ? " · best " + m.best : "";
    const note = el("span", "analysis " + (m.mark || "good"), (m.mark || "good") + " · loss " + m.loss.toFixed(2) + best);
    note.title = "expected points of the hand: played " + m.value + ", best " + m.best_value;
    box.appendChild(note);
  }

  function seatPanel(f, s) {
    const p = el("div", "seat");
    p.dataset.seat = s;
    if (f.turn === s) p.classList.add("turn");
    if (f.seat === s) p.classList.add("mover");
    const who = el("div", "who");
    const dot = el("span", "sidedot"); dot.style.background = SIDE_COLORS[D.side_of[s] % 3];
    who.appendChild(dot);
    who.appendChild(el("b", null, D.seats[s]));
    who.appendChild(el("span", "chip", "seat " + s));
    if (f.dealer === s) who.appendChild(el("span", "chip dealer", "dealer"));
    if (f.turn === s) who.appendChild(el("span", "chip", "to play"));
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
      const tr = el("tr"); tr.appendChild(el("td", "l", c.label));
      bd.forEach((b) => {
        let v = String(b[c.key] || 0);
        if (c.key === "sevens" && b.primera !== undefined) v += " (primera " + b.primera + ")";
        else if (c.count) v += " (" + b[c.count] + ")";
        tr.appendChild(el("td", null, v));
      });
      t.appendChild(tr);
    }
    const tot = el("tr"); tot.appendChild(el("th", "l", D.total_labels.hand));
    bd.forEach((b) => tot.appendChild(el("th", null, String(b.total))));
    t.appendChild(tot);
    if (totals) {
      const m = el("tr"); m.appendChild(el("th", "l", D.total_labels.match));
      totals.forEach((v) => m.appendChild(el("th", null, String(v))));
      t.appendChild(m);
    }
    box.appendChild(t);
  }

  // What no seat saw during play (docs/REPLAY.md, "decks" and "offered"): the stock in dealing
  // order, face down in a seat's view, and the legal moves offered to the seat to play (in a
  // seat's view, only its own), the one it played marked.
  function renderAfterwards(f) {
    const list = $("stock-list"), moves = $("offered"), title = $("offered-title");
    list.textContent = ""; moves.textContent = ""; title.textContent = "";
    const deck = D.decks[f.hand] || [];
    const stock = deck.slice(deck.length - f.stock);
    if (view !== "all") list.appendChild(el("span", "nocards", stock.length + " cards, face down in this view"));
    else if (!stock.length) list.appendChild(el("span", "nocards", "empty"));
    else for (const t of stock) list.appendChild(cardEl(t, {mini: true}));
    if (f.turn === null || (view !== "all" && String(f.turn) !== view)) return;
    const next = f.move_index === null ? 0 : f.move_index + 1;
    const offered = D.offered[next] || [];
    const played = next + 1 < D.steps.length ? D.steps[next + 1][3] : null;
    title.textContent = "Legal moves offered to " + D.captions.seats[f.turn];
    for (const m of offered) moves.appendChild(el("li", m === played ? "played" : null, m));
  }

  function lastScored(i) {
    for (let j = i; j >= 0; j--) if (F[j].kind === "hand_score") return F[j];
    return null;
  }

  // Seats in play order around the table, seat 0 at the bottom, so that partners sit
  // opposite each other as at a real table (4 players: 0 bottom, 1 right, 2 top, 3 left).
  function aroundTheTable(n) {
    if (n === 4) return {bottom: [0], right: [1], top: [2], left: [3]};
    if (n === 6) return {bottom: [0], right: [2, 1], top: [3], left: [4, 5]};
    const half = Math.ceil(n / 2), top = [];
    for (let s = n - 1; s >= half; s--) top.push(s);
    return {bottom: [...Array(half).keys()], top: top};
  }

  function render() {
    const f = F[pos];
    const n = D.players;
    const places = {top: $("seats-top"), bottom: $("seats-bottom"), left: $("seats-left"), right: $("seats-right")};
    for (const box of Object.values(places)) box.textContent = "";
    for (const [where, seats] of Object.entries(aroundTheTable(n))) {
      for (const s of seats) places[where].appendChild(seatPanel(f, s));
    }
    const tc = $("table-cards"); tc.textContent = "";
    const hl = new Set(f.highlight);
    if (!f.table.length) tc.appendChild(el("span", "nocards", "the table is empty"));
    for (const t of f.table) tc.appendChild(cardEl(t, {hl: hl.has(t)}));
    $("stock-count").textContent = String(f.stock);
    $("stock-card").style.visibility = f.stock ? "visible" : "hidden";
    caption($("caption"), f);
    renderAfterwards(f);
    const note = f.move !== null ? NOTES.get(f.move_index) : undefined;
    $("notes").textContent = note === undefined ? "" : "info: " + note;
    const logs = $("logs"); logs.textContent = "";
    const lines = f.move !== null ? LOGS.get(f.move_index) || [] : [];
    $("logs-panel").style.display = LOGS.size ? "block" : "none";
    for (const [seat, t, text] of lines) {
      const row = el("div");
      row.appendChild(el("span", "t", t.toFixed(1) + " ms seat " + seat + " "));
      row.appendChild(document.createTextNode(text));
      logs.appendChild(row);
    }
    $("hand-info").textContent = "Hand " + (f.hand + 1) + " · round " + (f.round + 1);
    // scoreboard
    const sb = $("scoreboard"); sb.textContent = "";
    const over = f.kind === "match_end" || f.kind === "forfeit";
    D.sides.forEach((name, side) => {
      const row = el("div", "side");
      if (over && D.result.winner === side) row.classList.add("winner");
      const left = el("div");
      const nm = el("div", "name"); const dot = el("span", "sidedot"); dot.style.background = SIDE_COLORS[side % 3];
      nm.appendChild(dot); nm.appendChild(document.createTextNode(" " + name));
      left.appendChild(nm);
      const pile = f.piles[side], esc = f.escobas[side];
      left.appendChild(el("div", "pile", "this hand: " + pile.cards + " cards · " + pile.oros + " oros · " + pile.sevens + (pile.sevens === 1 ? " seven" : " sevens") +
        (pile.velo ? " · velo" : "") + (esc ? " · " + esc + " escoba" + (esc > 1 ? "s" : "") : "")));
      row.appendChild(left);
      const sc = el("div", "side-score", String(f.scores[side])); sc.dataset.side = side;
      row.appendChild(sc);
      sb.appendChild(row);
    });
    $("final").style.display = over ? "block" : "none";
    const ls = lastScored(pos);
    renderBreakdown($("breakdown"), ls ? ls.breakdown : null, ls ? ls.scores : null,
      ls ? "Hand " + (ls.hand + 1) + " score" + (ls === f ? "" : " (last scored)") : "Hand score");
    for (const tr of document.querySelectorAll("#hands-body tr")) tr.classList.toggle("cur", Number(tr.dataset.hand) === f.hand);
    $("slider").value = String(pos);
    const mv = f.move_index === null ? 0 : f.move_index + 1;
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
  function handStart(h) { for (let i = 0; i < F.length; i++) if (F[i].hand === h) return i; return 0; }
  function nextHand(dir) {
    const h = F[pos].hand + dir;
    if (h < 0) return go(0);
    if (h > F[F.length - 1].hand) return go(F.length - 1);
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
    for (const style of D.suits.styles) { const o = el("option", null, style.label); o.value = style.key; $("suits").appendChild(o); }
    $("suits").value = suits;
    $("suits").addEventListener("change", () => { suits = $("suits").value; render(); });
    // hand-by-hand table
    const hb = $("hands-body");
    const hh = $("hands-head");
    hh.appendChild(el("th", "l", "Hand"));
    D.sides.forEach((n) => hh.appendChild(el("th", null, n)));
    for (const h of D.events.filter((e) => e.type === "hand_score")) {
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
  }

  if ($("replay-data")) {
    start(JSON.parse($("replay-data").textContent));
  } else {
    // A name the report wrote (letters, digits, . _ -); anything else names no data file.
    const name = decodeURIComponent(location.hash.slice(1));
    window.addEventListener("hashchange", () => location.reload());
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith(".")) {
      refuse("No replay named", "This page shows a match named after # in its address (replay.html#MATCH).", "no_data");
    } else {
      window.escobaReplayData = (D) => { window.escobaReplayData = null; start(D); };
      const s = document.createElement("script");
      s.src = CONFIG.data + name + ".js";
      s.onerror = () => refuse("No replay " + name, "Its data file " + CONFIG.data + name + ".js is missing beside this page.", "no_data");
      document.body.appendChild(s);
    }
  }
})();

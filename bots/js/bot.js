#!/usr/bin/env node
// A greedy Escoba Arena bot in JavaScript (protocol 1, docs/PROTOCOL.md). Node 16+, no packages.
// Run: node bots/js/bot.js
//
// Its rule of thumb, the same as bots/greedy_bot.py: take the best capture (an escoba, then
// the siete de oros, then sevens, oros, cards); with none, trail the card that leaves the
// table hardest to sweep, counting the cards it has not seen yet.
"use strict";
const readline = require("readline");

const VALUE = { 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 10: 8, 11: 9, 12: 10 };
const rank = (c) => parseInt(c, 10);
const suit = (c) => c[c.length - 1];
const value = (c) => VALUE[rank(c)];
const isOro = (c) => (suit(c) === "o" ? 1 : 0);
const isSeven = (c) => (rank(c) === 7 ? 1 : 0);
const DECK = [];
for (const s of "oceb") for (const r of [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]) DECK.push(`${r}${s}`);

let seen = new Set(); // every card this seat has seen in the current hand

function onEvent(ev) {
  if (ev.type === "deal" && ev.round === 0) seen = new Set();
  for (const key of ["table", "cards", "take"]) for (const c of ev[key] || []) seen.add(c);
  if (ev.card) seen.add(ev.card);
}

// "5e+4b+6o" -> {kind, card, take}; "renuncio 5e+4b", "mesa 3b+12c", "pass" likewise.
function parseMove(text) {
  if (text === "pass") return { kind: "pass", card: null, take: [] };
  let kind = "play";
  let body = text;
  if (text.startsWith("renuncio ")) { kind = "claim"; body = text.slice(9); }
  else if (text.startsWith("mesa ")) { kind = "take"; body = text.slice(5); }
  const parts = body.split("+");
  if (kind === "take") return { kind, card: null, take: parts };
  return { kind, card: parts[0], take: parts.slice(1) };
}

function sweepRisk(total, unseenByValue) {
  const need = 15 - total;
  return need >= 1 && need <= 10 ? unseenByValue[need] : 0;
}

// Compare arrays of numbers left to right.
function better(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

function choose(view, legalTexts) {
  const table = view.table;
  for (const c of view.hand) seen.add(c);
  for (const c of table) seen.add(c);
  const unseenByValue = new Array(11).fill(0);
  for (const c of DECK) if (!seen.has(c)) unseenByValue[value(c)]++;
  const tableTotal = table.reduce((s, c) => s + value(c), 0);

  let best = null;
  let bestKey = null;
  for (const text of legalTexts) {
    const m = parseMove(text);
    let key;
    if (m.take.length > 0 || m.kind === "claim") {
      const got = m.kind === "take" ? m.take : [m.card, ...m.take];
      const fromTable = m.kind === "play" ? m.take : got;
      const left = tableTotal - fromTable.reduce((s, c) => s + value(c), 0);
      const escoba = fromTable.length === table.length ? 1 : 0;
      key = [1, escoba, got.includes("7o") ? 1 : 0, got.reduce((s, c) => s + isSeven(c), 0),
             got.reduce((s, c) => s + isOro(c), 0), got.length, -sweepRisk(left, unseenByValue)];
    } else if (m.kind === "play") {
      const c = m.card;
      key = [0, -sweepRisk(tableTotal + value(c), unseenByValue), c === "7o" ? -1 : 0, -isSeven(c),
             -isOro(c), -value(c), 0];
    } else {
      key = [-1, 0, 0, 0, 0, 0, 0]; // pass: only when there is nothing to claim
    }
    if (best === null || better(key, bestKey)) { best = text; bestKey = key; }
  }
  return best;
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try { msg = JSON.parse(line); } catch (e) { process.stderr.write(`bad line: ${line}\n`); return; }
  switch (msg.type) {
    case "hello":
    case "new_match":
      seen = new Set();
      send({ type: "ready", name: "greedy.js", protocol: 1 });
      break;
    case "event":
      onEvent(msg.event);
      break;
    case "request": {
      let move;
      try { move = choose(msg.view, msg.legal); } catch (e) {
        process.stderr.write(`choose failed: ${e.stack}\n`);
        move = msg.legal[0];
      }
      send({ type: "move", id: msg.id, move });
      break;
    }
    case "goodbye":
      rl.close();
      process.exit(0);
  }
});
rl.on("close", () => process.exit(0));

"""Drawing a replay as text: one screen per frame, or the whole match as a plain transcript.

Pure: frames in, strings out; the CLI decides where they go. Cards are drawn in brackets
(``[ 7o]``), coloured by suit with ANSI codes when asked, in Spanish or French suits
(``arena.render.suits``), with a plain ASCII fallback for both.

Names and failure details come from the record, untrusted: they are escaped
(``arena.printable``) before any colour of the arena's own is added around them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arena.core.cards import Card
from arena.core.events import Cards, Claim, Deal, EscobaEnMano, HandScore, InitialCapture, Play, Sweep
from arena.core.outcome import EndReason
from arena.core.rules import Rules, Seating
from arena.core.scoring import CATEGORIES
from arena.harness.protocol import MAX_INFO_BYTES, Info, InfoDrop
from arena.match.record import GameRecord
from arena.match.replay import Frame, Replay, side_names
from arena.printable import printable
from arena.render.suits import SUIT_LOOKS, SuitStyle

# The score categories' names, and the breakdown key holding what each one counted; the HTML
# page gets both in its JSON (``arena.render.html``).
CATEGORY_LABELS: Mapping[str, str] = MappingProxyType({
    "escobas": "escobas", "cards": "most cards", "oros": "most oros", "velo": "siete de oros", "sevens": "sevens",
    "all_sevens": "all four sevens"})
COUNT_KEYS: Mapping[str, str] = MappingProxyType({"cards": "n_cards", "oros": "n_oros", "sevens": "n_sevens"})
# The last rows of a hand's score: its total, and the match score after it.
TOTAL_LABELS: Mapping[str, str] = MappingProxyType({"hand": "hand total", "match": "match score"})
# Why a bot's notes were dropped (the HTML page gets these in its JSON too).
INFO_DROP_LABELS: Mapping[str, str] = MappingProxyType({
    InfoDrop.NOT_OBJECT.value: "not a JSON object", InfoDrop.TOO_LARGE.value: f"over {MAX_INFO_BYTES} bytes",
    InfoDrop.TOO_DEEP.value: "nested too deep", InfoDrop.INVALID.value: "not valid JSON (NaN, a lone surrogate)"})


def info_text(info: Info) -> str:
    """A bot's notes with its move, as one escaped line: the object as compact JSON, or why
    it was dropped."""
    if isinstance(info, InfoDrop):
        return f"(notes dropped: {INFO_DROP_LABELS[info.value]})"
    return printable(json.dumps(info, ensure_ascii=False, separators=(",", ":")))


def stderr_text(record: GameRecord, match: str) -> str:
    """What each seat's bot wrote on stderr during match ``match`` (its id, or its file), seat
    by seat, each line with the match, the seat and its time since the match began, escaped."""
    out = []
    dropped = record.stderr_dropped or (0,) * len(record.seats)
    for seat in range(len(record.seats)):
        lines = [line for line in record.stderr if line.seat == seat]
        cut = f"; {dropped[seat]:,} bytes more dropped past the caps" if dropped[seat] else ""
        out.append(f"== {printable(match)} | {seat_name(record, seat)} | stderr: {counted(len(lines), 'line')}{cut} ==")
        out.extend(f"{printable(match)} seat {seat} {line.t_ms:>10.3f} ms  {printable(line.text)}" for line in lines)
    return "\n".join(out) + "\n"


def _info_of(replay: Replay, frame: Frame) -> Info | None:
    if frame.move is None or frame.move_index is None:
        return None
    return replay.record.moves[frame.move_index].info


@dataclass(frozen=True)
class TextStyle:
    """How cards look: ``suits`` the suit style; ``color`` ANSI colours; ``unicode`` suit
    symbols and box characters (else plain ASCII)."""

    suits: SuitStyle = SuitStyle.SPANISH
    color: bool = False
    unicode: bool = False

    def __post_init__(self) -> None:
        # A style's name (``"french"``) is taken too, as a library caller may give it.
        object.__setattr__(self, "suits", SuitStyle.parse(self.suits))

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text

    def dim(self, text: str) -> str:
        return f"\x1b[2m{text}\x1b[0m" if self.color else text

    def highlight(self, text: str) -> str:
        return f"\x1b[1;7m{text}\x1b[0m" if self.color else text


PLAIN = TextStyle()


def card_label(card: Card, style: TextStyle = PLAIN) -> str:
    """The card's short text: ``7o`` (Spanish), ``7♦`` or ``7d`` (French), without colour."""
    if style.suits is SuitStyle.SPANISH:
        return str(card)
    look = SUIT_LOOKS[card.suit]
    return style.suits.ranks.get(card.rank, str(card.rank)) + (look.french_symbol if style.unicode else look.french_letter)


def _width(style: TextStyle) -> int:
    return 3 if style.suits is SuitStyle.SPANISH else 2


def draw_card(card: Card, style: TextStyle = PLAIN) -> str:
    """``[ 7o]``: the label right-aligned in brackets, coloured by suit when asked."""
    label = card_label(card, style).rjust(_width(style))
    if style.color:
        label = f"\x1b[1;{SUIT_LOOKS[card.suit].ansi}m{label}\x1b[0m"
    return f"[{label}]"


def draw_back(style: TextStyle = PLAIN) -> str:
    """A face-down card, the same width as a face-up one."""
    return "[" + ("░" if style.unicode else "#") * _width(style) + "]"


def draw_cards(cards: Iterable[Card], style: TextStyle = PLAIN, empty: str = "-") -> str:
    drawn = [draw_card(c, style) for c in cards]
    return " ".join(drawn) if drawn else empty


def cards_text(cards: Iterable[Card], style: TextStyle = PLAIN) -> str:
    """Cards as plain labels separated by spaces (``2c 4b 6o``), coloured when asked."""
    out = []
    for c in cards:
        label = card_label(c, style)
        out.append(f"\x1b[{SUIT_LOOKS[c.suit].ansi}m{label}\x1b[0m" if style.color else label)
    return " ".join(out)


# --- naming -----------------------------------------------------------------------------------


def seat_name(replay: Replay | GameRecord, seat: int) -> str:
    record = replay.record if isinstance(replay, Replay) else replay
    return f"seat {seat} ({printable(record.seats[seat])})"


def _side_labels(replay: Replay) -> tuple[str, ...]:
    return tuple(printable(name) for name in replay.side_names())


CardsFormatter = Callable[[Iterable[Card], TextStyle], str]

# What each step says, with its fields in braces: ``{seat}`` a seat's name, ``{side}`` a side's,
# ``{card}``/``{cards}``/``{take}``/``{table}`` groups of cards, the rest numbers or text. The
# terminal fills them here (``describe``); the HTML page gets the same table in its data and
# fills it in its script, so every sentence has this one home.
CAPTIONS: Mapping[str, str] = MappingProxyType({
    "deal": "Hand {hand}: {dealer} deals; table {table}",
    "round": "Round {round} of hand {hand}: 3 more cards each ({stock} left in the stock)",
    "initial_capture": "{seat}, the dealer, takes {cards} from the table",
    "escoba_en_mano": "{seat} shows {cards} (15 in hand) and sits out the round",
    "capture": "{seat} plays {card} and takes {take}",
    "trail": "{seat} plays {card} onto the table",
    "renuncio": "{seat} claims the renuncio: takes {card} with {take}",
    "renuncio_alone": "{seat} claims the renuncio: takes {card} with nothing else",
    "pass": "{seat} lets the renuncio go",
    "pass_nobody": "pass",
    "sweep_empty": "The hand is over; the table is empty",
    "sweep_nobody": "The hand is over; nobody captured, so {cards} go to nobody",
    "sweep": "The hand is over; {cards} go to {side}, who captured last",
    "hand_score": "Hand {hand} scored: {points}",
    "hand_score_side": "{side} {points}",  # one side's part of {points}, joined by ", "
    "match_end": "Match over: {result}",
})
_FIELD_RE = re.compile(r"\{(\w+)\}")


def caption_parts(frame: Frame, replay: Replay) -> tuple[str, dict[str, object]]:
    """The ``CAPTIONS`` key of a frame and its fields: numbers, seat or side numbers, lists of
    cards, and ``points`` (per side) or ``result`` (the match's end) as values."""
    ev = frame.events
    first = ev[0] if ev else None
    if isinstance(first, Deal):
        if first.round == 0:
            return "deal", {"hand": frame.hand + 1, "dealer": frame.dealer, "table": first.table}
        return "round", {"round": first.round + 1, "hand": frame.hand + 1, "stock": frame.stock}
    if isinstance(first, (InitialCapture, EscobaEnMano)):
        return first.kind, {"seat": first.seat, "cards": first.cards}
    if isinstance(first, Play):
        if first.take:
            return "capture", {"seat": first.seat, "card": [first.card], "take": first.take}
        return "trail", {"seat": first.seat, "card": [first.card]}
    if isinstance(first, Claim):
        key = "renuncio" if first.take else "renuncio_alone"
        return key, {"seat": first.seat, "card": [first.card], "take": first.take}
    if frame.kind == "pass":
        return ("pass", {"seat": frame.seat}) if frame.seat is not None else ("pass_nobody", {})
    if isinstance(first, Sweep):
        if not first.cards:
            return "sweep_empty", {}
        if first.side is None:
            return "sweep_nobody", {"cards": first.cards}
        return "sweep", {"cards": first.cards, "side": first.side}
    if isinstance(first, HandScore):
        return "hand_score", {"hand": frame.hand + 1, "points": first.points}
    if frame.kind in ("match_end", "forfeit"):
        return "match_end", {"result": result_text(replay)}
    return "", {"kind": frame.kind}


def _fill(template: str, texts: Mapping[str, str]) -> str:
    return _FIELD_RE.sub(lambda m: texts[m.group(1)], template)


def describe(frame: Frame, replay: Replay, style: TextStyle = PLAIN, show: CardsFormatter | None = None,
             *, escoba_word: bool = True) -> str:
    """One line saying what happened in this frame (``CAPTIONS``). ``show`` formats each group
    of cards named in it. Without ``escoba_word`` the line does not end in "ESCOBA!"."""
    shown = cards_text if show is None else show
    names = _side_labels(replay)
    key, fields = caption_parts(frame, replay)
    if not key:
        return str(fields["kind"])

    texts: dict[str, str] = {}
    for name, field in fields.items():
        if name in ("seat", "dealer"):
            texts[name] = seat_name(replay, int(str(field)))
        elif name == "side":
            texts[name] = names[int(str(field))]
        elif name == "points" and isinstance(field, tuple):
            texts[name] = ", ".join(_fill(CAPTIONS["hand_score_side"], {"side": names[s], "points": str(p)})
                                    for s, p in enumerate(field))
        elif name in ("card", "cards", "take", "table") and isinstance(field, (list, tuple)):
            texts[name] = shown(field, style)
        else:
            texts[name] = str(field)
    line = _fill(CAPTIONS[key], texts)
    escoba = frame.escoba
    if escoba and escoba_word and key in ("initial_capture", "escoba_en_mano", "capture", "renuncio", "renuncio_alone"):
        line += "  " + style.bold(escoba_text(escoba))
    return line


def escoba_text(escobas: int) -> str:
    """What the replays say of a move that made ``escobas`` escobas."""
    return "ESCOBA!" if escobas == 1 else f"{escobas} ESCOBAS!"


def match_end_text(record: GameRecord, seating: Seating, labels: Sequence[str] | None = None) -> str:
    """How a match ended, in the one sentence every view of a match says it with (the replay,
    its page, ``arena play``): ``greedy wins 21-9 after 5 hands``; a team of two or three
    (``greedy & js``) takes the plural verb. A forfeit says in which hand it came (the hands
    before it are the ones played) or that it came before any move, and which bots failed how.
    ``labels`` name the sides (default: their bots, ``side_names``)."""
    r = record.result
    names = tuple(labels) if labels is not None else tuple(printable(name) for name in side_names(record, seating))
    # The winner's score first (``greedy wins 22-15``), the others in side order after it.
    order = [r.winner, *(i for i in range(len(r.scores)) if i != r.winner)] if r.winner is not None else range(len(r.scores))
    score = "-".join(str(r.scores[i]) for i in order)
    head = "no winner"
    if r.winner is not None:
        head = f"{names[r.winner]} {'win' if len(seating.seats_of(r.winner)) > 1 else 'wins'}"
    if r.reason is EndReason.FORFEIT:
        failed = [o for o in record.outcomes if o.termination.is_failure]
        why = "; ".join(f"seat {o.seat} ({printable(o.bot)}) {o.termination.value}"
                        + (f": {printable(o.detail)}" if o.detail else "") for o in failed)
        when = f"in hand {r.hands}" if record.moves else "before any move"
        return f"{head} {score} by forfeit {when} ({why})"
    if r.winner is None:
        return f"draw {score} after {counted(r.hands, 'hand')} ({r.reason})"
    return f"{head} {score} after {counted(r.hands, 'hand')}"


def result_text(replay: Replay) -> str:
    """``match_end_text`` of a replayed match."""
    return match_end_text(replay.record, replay.seating)


def rules_text(replay: Replay | Rules) -> str:
    """The rule options that differ from the defaults, or 'default rules'."""
    rules = replay.rules if isinstance(replay, Replay) else replay
    base = Rules().to_dict()
    mine = rules.to_dict()
    diff = [f"{k}={_value(v)}" for k, v in mine.items() if base[k] != v]
    # The target is always worth seeing; it is already listed when it is not the default.
    target = "" if mine["target"] != base["target"] else f" (target {rules.target})"
    return "rules: " + (", ".join(diff) if diff else "defaults") + target


def _value(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def breakdown_lines(replay: Replay, breakdown: Sequence[dict[str, int]], totals: Sequence[int] | None,
                    style: TextStyle = PLAIN) -> list[str]:
    """A hand's score as a small table: a row per category, a column per side."""
    names = _side_labels(replay)
    cats = [c for c in CATEGORIES if c != "all_sevens" or replay.rules.all_sevens_bonus]
    rows: list[list[str]] = [["", *names]]
    for cat in cats:
        cells = []
        for b in breakdown:
            points = str(b.get(cat, 0))
            count = COUNT_KEYS.get(cat)
            if cat == "sevens" and "primera" in b:
                points += f" (primera {b['primera']})"
            elif count is not None:
                points += f" ({b.get(count, 0)})"
            cells.append(points)
        rows.append([CATEGORY_LABELS[cat], *cells])
    rows.append([TOTAL_LABELS["hand"], *(str(b.get("total", 0)) for b in breakdown)])
    if totals is not None:
        rows.append([TOTAL_LABELS["match"], *map(str, totals)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        line = "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        lines.append(style.bold(line.rstrip()) if n in (0, len(rows) - 1) else line.rstrip())
    return lines


def _pile_summary(pile: Sequence[Card], escobas: int) -> str:
    """``21 cards, 5 oros, 2 sevens (with the velo), 1 escoba``: what a side's pile holds for
    the count (an oro is a card of oros; the velo is the siete de oros)."""
    oros = sum(c.oro for c in pile)
    sevens = counted(sum(c.seven for c in pile), "seven")
    if any(c.is_velo for c in pile):
        sevens = "1 seven (the velo)" if sevens == "1 seven" else f"{sevens} (with the velo)"
    esc = f", {counted(escobas, 'escoba')}" if escobas else ""
    return f"{counted(len(pile), 'card')}, {counted(oros, 'oro')}, {sevens}{esc}"


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``1 deal``, ``2 deals`` (``plural`` for a word that does not take an s: ``matches``)."""
    return f"{count} {word if count == 1 else plural or word + 's'}"


# --- a screen -----------------------------------------------------------------------------------


def render_screen(replay: Replay, index: int, style: TextStyle = PLAIN, seat: int | None = None,
                  help_line: str | None = None) -> str:
    """The whole table at frame ``index``: header, score, hands, table, piles, what happened,
    and at the end of a hand its score breakdown. ``seat``: show only that seat's hand."""
    frame = replay.frames[index]
    rec = replay.record
    names = _side_labels(replay)
    seating = replay.seating
    moves = replay.moves
    move_no = 0 if frame.move_index is None else frame.move_index + 1
    lines = [
        style.bold(f"Escoba replay | seed {rec.seed} | {seating.players} players") + f" | {rules_text(replay)}",
        (f"Hand {frame.hand + 1} | round {frame.round + 1} | dealer {seat_name(replay, frame.dealer)} | "
         f"stock {frame.stock} | frame {index + 1}/{len(replay.frames)} | move {move_no}/{moves}"),
        "Score: " + "  ".join(f"{names[s]} {style.bold(str(t))}" for s, t in enumerate(frame.scores))
        + f"   (to {replay.rules.target})",
        "",
    ]
    name_width = max(len(seat_name(replay, s)) for s in range(seating.players))
    for s in range(seating.players):
        hand = frame.hands[s]
        if seat is None or s == seat:
            drawn = draw_cards(hand, style, empty="(no cards)")
        else:
            drawn = " ".join(draw_back(style) for _ in hand) or "(no cards)"
        marker = ">" if frame.turn == s else " "
        if frame.seat == s:
            marker = "*"
        label = seat_name(replay, s).ljust(name_width)
        if frame.turn == s:
            label = style.highlight(label)
        dealer = " (dealer)" if frame.dealer == s else ""
        lines.append(f" {marker} {label}  {drawn}{dealer}")
    lines.append("")
    lines.append(f"   {'table'.ljust(name_width)}  {draw_cards(frame.table, style, empty='(empty)')}")
    lines.extend(_afterwards_lines(replay, frame, style, seat, name_width))
    lines.append("")
    for side in range(seating.sides):
        lines.append(f"   pile of {names[side]}: {_pile_summary(frame.piles[side], frame.escobas[side])}")
    lines.append("")
    lines.append(" " + (f"{move_no}. " if frame.move is not None else "") + describe(frame, replay, style))
    info = _info_of(replay, frame)
    if info is not None:
        lines.append("    " + style.dim("info: " + info_text(info)))
    if frame.kind == "hand_score" and frame.breakdown is not None:
        lines.append("")
        lines.extend("   " + ln for ln in breakdown_lines(replay, frame.breakdown, frame.scores, style))
    if frame.kind in ("match_end", "forfeit"):
        lines.append("")
        lines.append(" " + style.bold(result_text(replay)))
    if help_line:
        lines.append("")
        lines.append(style.dim(help_line))
    return "\n".join(lines)


def offered_text(legal: Sequence[str], chosen: str | None = None) -> str:
    """The legal moves a decision offered, numbered from 1, the one ``chosen`` in brackets:
    ``offered 3: 1 7o  [2 7o+8c]  3 5b``."""
    shown = [f"[{n} {m}]" if m == chosen else f"{n} {m}" for n, m in enumerate(legal, 1)]
    return f"offered {len(legal)}: " + "  ".join(shown)


def _afterwards_lines(replay: Replay, frame: Frame, style: TextStyle, seat: int | None, width: int) -> list[str]:
    """What no seat saw during play, on a screen: the stock in dealing order (hidden from a
    seat's view) and the legal moves offered to the seat to play (in a seat's view, only its own)."""
    lines = []
    if seat is None:
        lines.append(f"   {'stock'.ljust(width)}  {draw_cards(replay.afterwards.stock(frame), style, empty='(empty)')}")
    legal = replay.afterwards.legal(frame)
    if legal and (seat is None or frame.turn == seat):
        lines.append(f"   {'to play'.ljust(width)}  {offered_text(legal)}")
    return lines


# --- the whole match as a transcript -------------------------------------------------------------


def render_transcript(replay: Replay, style: TextStyle = PLAIN, seat: int | None = None) -> str:
    """The whole match, hand by hand and move by move, for a file or a pipe."""
    rec = replay.record
    names = _side_labels(replay)
    seating = replay.seating
    out = [
        f"Escoba replay | seed {rec.seed} | {seating.players} players | {rules_text(replay)}",
        "Seats: " + ", ".join(f"{s} {printable(rec.seats[s])}" for s in range(seating.players))
        + ("" if not seating.is_teams else " | sides: " + " vs ".join(names)),
        f"Result: {result_text(replay)}",
        f"Verified: {counted(replay.moves, 'recorded move')} replayed through the rules core to this result.",
    ]
    if seat is not None:
        out.append(f"Seen by {seat_name(replay, seat)}: the other hands are hidden.")
    width = max(len(seat_name(replay, s)) for s in range(seating.players))
    for frame in replay.frames:
        kind = frame.kind
        deal = frame.events[0] if frame.events else None
        if isinstance(deal, Deal):
            if deal.round == 0:
                out.append("")
                out.append(style.bold(f"== Hand {frame.hand + 1} | dealer {seat_name(replay, frame.dealer)} | "
                                      f"score {'-'.join(map(str, frame.scores))} =="))
                out.append(f"  table: {draw_cards(deal.table, style)}")
            else:
                out.append(f"  -- round {deal.round + 1} ({frame.stock} cards left in the stock)")
            for e in frame.events:
                if isinstance(e, Cards) and (seat is None or e.seat == seat):
                    out.append(f"  {seat_name(replay, e.seat).ljust(width)}  {draw_cards(e.cards, style)}")
            if seat is None:
                out.append(f"  {'stock'.ljust(width)}  {draw_cards(replay.afterwards.stock(frame), style)}")
            continue
        if kind in ("play", "renuncio", "pass"):
            num = f"{frame.move_index + 1}." if frame.move_index is not None else ""
            out.append(f"  {num:>5} {describe(frame, replay, style)}")
            info = _info_of(replay, frame)  # the bot's own notes first, right under its move
            if info is not None:
                out.append(f"        info: {info_text(info)}")
            if frame.move_index is not None and frame.move is not None and (seat is None or frame.seat == seat):
                out.append(f"        {offered_text(replay.afterwards.offered[frame.move_index], frame.move)}")
            out.append(f"        table: {draw_cards(frame.table, style, empty='(empty)')}")
            continue
        if kind == "hand_score" and frame.breakdown is not None:
            out.append("  " + describe(frame, replay, style))
            out.extend("    " + ln for ln in breakdown_lines(replay, frame.breakdown, frame.scores, style))
            continue
        if kind in ("match_end", "forfeit"):
            out.append("")
            out.append(style.bold(describe(frame, replay, style)))
            continue
        num = f"{frame.move_index + 1}. " if frame.move is not None and frame.move_index is not None else ""
        out.append("  " + num + describe(frame, replay, style))
    return "\n".join(out) + "\n"


__all__ = ["CAPTIONS", "CATEGORY_LABELS", "COUNT_KEYS", "INFO_DROP_LABELS", "TOTAL_LABELS", "info_text",
           "counted", "caption_parts", "seat_name", "stderr_text",
           "TextStyle", "PLAIN", "card_label", "draw_card",
           "draw_back", "draw_cards", "cards_text", "describe", "escoba_text", "match_end_text", "result_text",
           "rules_text", "offered_text", "breakdown_lines", "render_screen", "render_transcript"]

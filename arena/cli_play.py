"""``arena play``: one match between bot commands, shown as it goes; ``arena check-bot``: a
conformance run of one bot with a pass/fail report."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.botproc import BotProcess, BotSpec, ConversationLog, Limits, missing_program
from arena.cards import Card
from arena.errors import ArenaError
from arena.protocol import BotFailure, Ready, Termination
from arena.record import GameRecord
from arena.referee import FailurePolicy, LocalBot, play_match
from arena.rules import Rules, Seating


@contextmanager
def _exit_on_sigterm() -> Iterator[None]:
    """SIGTERM ends the command like Ctrl-C does: through ``finally`` blocks, so the bots'
    process groups are killed rather than left behind. The previous handler comes back after."""
    try:
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _open_conversation(logs: Path | None) -> Any:
    """The conversation log file in ``logs`` (created), or None without ``--logs``."""
    if logs is None:
        return None
    try:
        logs.mkdir(parents=True, exist_ok=True)
        return open(logs / "conversation.log", "w", encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot write logs to {logs}: {exc.strerror}", 1) from None


def _parse_rule(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise typer.BadParameter(f"expected KEY=VALUE (e.g. renuncio=true), got {text!r}")
    raw = raw.strip()
    value: Any
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            value = raw
    return key.strip(), value


def _seating(count: int, pairs: bool) -> Seating:
    if pairs:
        if count == 4:
            return Seating.pairs(4)
        if count == 6:
            return Seating.pairs(6, 2)
        raise typer.BadParameter(f"--pairs needs 4 or 6 bot commands, got {count}")
    if count in (2, 3, 4):
        return Seating.alone(count)
    if count == 6:
        raise typer.BadParameter("6 players must play in teams: add --pairs")
    raise typer.BadParameter(f"give 2, 3 or 4 bot commands (4 or 6 with --pairs), got {count}")


def _unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
    counts: dict[str, int] = {}
    for spec in specs:
        if seen[spec.name] > 1:
            counts[spec.name] = counts.get(spec.name, 0) + 1
            spec = BotSpec(name=f"{spec.name}#{counts[spec.name]}", cmd=spec.cmd, cwd=spec.cwd, env=spec.env,
                           inherit_env=spec.inherit_env, limits=spec.limits)
        out.append(spec)
    return out


class _Printer:
    """Shows a match as it goes: one line per play with the table after it, hand scores, result."""

    def __init__(self, names: Sequence[str], seating: Seating, echo: Callable[[str], None]) -> None:
        self.names = names
        self.seating = seating
        self.echo = echo
        self.table: list[str] = []
        self.pending_note = ""

    def side_name(self, side: int | None) -> str:
        if side is None:
            return "nobody"
        seats = self.seating.seats_of(side)
        return f"side {side} (" + " + ".join(self.names[s] for s in seats) + ")"

    def __call__(self, kind: str, item: dict[str, Any]) -> None:
        if kind == "failure":
            action = f"plays {item['substitute']} instead" if item["action"] == "substitute" else "forfeits the match"
            self.echo(f"  !! seat {item['seat']} {self.names[item['seat']]}: {item['termination']}: "
                      f"{item['detail']} -> the arena {action}")
            return
        if kind != "event":
            return
        t = item["type"]
        if t == "deal":
            if item["round"] == 0:
                self.table = list(item["table"])
                self.echo(f"hand {item['hand']}: dealer seat {item['dealer']}, table {' '.join(self.table)}")
        elif t == "initial_capture":
            for c in item["cards"]:
                self.table.remove(c)
            self.echo(f"  seat {item['seat']} {self.names[item['seat']]} takes {' '.join(item['cards'])} from the deal")
        elif t in ("play", "renuncio"):
            seat = item["seat"]
            if t == "play" and not item["take"]:
                self.table.append(item["card"])
                move = item["card"]
            else:
                for c in ([item["card"]] if t == "renuncio" else []) + item["take"]:
                    self.table.remove(c)
                move = "+".join([item["card"], *item["take"]])
                if t == "renuncio":
                    move = "renuncio " + move
            self.table.sort(key=lambda c: Card.parse(c).order)
            self.echo(f"  seat {seat} {self.names[seat]:<16} {move:<18} table: {' '.join(self.table) or '(empty)'}")
        elif t == "escoba_en_mano":
            self.echo(f"  seat {item['seat']} {self.names[item['seat']]} shows {' '.join(item['cards'])}: escoba en mano")
        elif t == "escoba":
            self.echo(f"  ** escoba for seat {item['seat']} {self.names[item['seat']]}")
        elif t == "sweep":
            if item["cards"]:
                self.echo(f"  the table ({' '.join(item['cards'])}) goes to {self.side_name(item['side'])}")
            self.table = []
        elif t == "hand_score":
            points = ", ".join(str(p) for p in item["points"])
            totals = "-".join(str(p) for p in item["totals"])
            self.echo(f"hand {item['hand']} points: {points}; match {totals}")


def _summary(record: GameRecord, seating: Seating) -> dict[str, Any]:
    result = record.result
    return {
        "winner": result.winner,
        "winner_seats": list(seating.seats_of(result.winner)) if result.winner is not None else [],
        "scores": list(result.scores),
        "reason": result.reason,
        "hands": result.hands,
        "seed": record.seed,
        "seats": [o.to_dict() for o in record.outcomes],
    }


def play(
    commands: Annotated[list[str], typer.Argument(help="Bot commands, one per seat in play order (quote each).")],
    pairs: Annotated[bool, typer.Option("--pairs", help="Play in teams: seats 0+2 vs 1+3 (or 3 teams of 2 with 6).")] = False,
    seed: Annotated[int | None, typer.Option(help="Match seed (default: random, printed).")] = None,
    target: Annotated[int | None, typer.Option(help="Points to win (rule option target, default 21).")] = None,
    rule: Annotated[list[str] | None, typer.Option(help="A rule option KEY=VALUE, e.g. renuncio=true; repeatable.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only one JSON object with the result at the end.")] = False,
    move_ms: Annotated[int, typer.Option(help="Time per decision, ms.")] = Limits.move_ms,
    bank_ms: Annotated[int, typer.Option(help="Extra time bank per bot per match, ms.")] = Limits.bank_ms,
    startup_ms: Annotated[int, typer.Option(help="Time to answer the handshake, ms.")] = Limits.startup_ms,
    grace_ms: Annotated[int, typer.Option(help="Tolerance added to every deadline, ms.")] = Limits.grace_ms,
    policy: Annotated[str, typer.Option(help="On a bot failure: loss (its side loses) or substitute (random move).")] = "loss",
    strikes: Annotated[int, typer.Option(help="With --policy substitute: failures substituted before the loss.")] = 3,
    record: Annotated[Path | None, typer.Option(help="Write the full game record (JSON) to this file.")] = None,
    logs: Annotated[Path | None, typer.Option(help="Folder for each bot's stderr log and the conversation log.")] = None,
    cpu: Annotated[
        int | None, typer.Option(help="Pin the arena and every bot to this CPU (faster hand-overs; bots share it).")
    ] = None,
) -> None:
    """Play one match between bot commands and show it as it goes."""
    try:
        seating = _seating(len(commands), pairs)
        options = dict(_parse_rule(r) for r in rule or [])
        if target is not None:
            options["target"] = target
        rules = Rules.from_dict(options)
        limits = Limits(startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)
        fail_policy = FailurePolicy(policy, strikes)
        specs = _unique_names([BotSpec.from_command(c, limits=limits) for c in commands])
        for spec in specs:
            problem = missing_program(spec.cmd, spec.cwd or os.getcwd(), dict(spec.env or {}))
            if problem:
                raise typer.BadParameter(f"bot {spec.name!r}: {problem}")
        allowed = os.sched_getaffinity(0)
        if cpu is not None and cpu not in allowed:
            raise typer.BadParameter(
                f"--cpu {cpu}: not one of the CPUs this process may use ({', '.join(map(str, sorted(allowed)))})"
            )
    except typer.BadParameter as exc:
        raise _fail(str(exc), 2) from None
    except ArenaError as exc:
        raise _fail(str(exc), 2) from None
    if seed is None:
        seed = secrets.randbelow(2**63)
    echo = (lambda text: None) if as_json else typer.echo
    names = [s.name for s in specs]
    echo(f"seed {seed}; " + ", ".join(f"seat {i}: {n}" for i, n in enumerate(names)))
    conv = _open_conversation(logs)
    log = ConversationLog(conv) if conv is not None else None
    bots = [BotProcess(spec, stderr_dir=logs, log=log, cpus=None if cpu is None else [cpu]) for spec in specs]
    try:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        with _exit_on_sigterm():
            game = play_match(bots, rules, seating, seed, fail_policy, observer=_Printer(names, seating, echo))
    finally:
        os.sched_setaffinity(0, allowed)
        for bot in bots:
            bot.close()
        if conv is not None:
            conv.close()
    if record is not None:
        try:
            record.write_text(json.dumps(game.to_dict(), indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise _fail(f"cannot write the record to {record}: {exc.strerror}", 1) from None
    summary = _summary(game, seating)
    if as_json:
        typer.echo(json.dumps(summary))
        return
    result = game.result
    scores = "-".join(map(str, result.scores))
    if result.winner is None:
        typer.echo(f"result: draw {scores} ({result.reason}, {result.hands} hands)")
    else:
        typer.echo(
            f"result: {_Printer(names, seating, echo).side_name(result.winner)} wins {scores} "
            f"({result.reason}, {result.hands} hands)"
        )
    for outcome in game.outcomes:
        if outcome.termination is not Termination.OK or outcome.strikes:
            typer.echo(
                f"  seat {outcome.seat} {outcome.bot}: {outcome.termination.value} {outcome.detail} (strikes: {outcome.strikes})"
            )


# --- check-bot ---------------------------------------------------------------------------------


class _Probe:
    """Wraps the bot under test for the referee: counts its forced choices (requests with one
    legal move) and, on its ``stale_at``-th decision, sends the request and abandons it at once
    (a ``timeout`` message naming a substitute move), as the arena does after a timeout."""

    def __init__(self, bot: BotProcess, stale_at: int = 0) -> None:
        self.bot = bot
        self.stale_at = stale_at
        self.count = 0
        self.forced = 0
        self.seat: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)

    def send_hello(self, hello: dict[str, Any]) -> None:
        self.bot.seat = self.seat
        self.bot.send_hello(hello)

    def decide(
        self, view: Any, legal: Sequence[str], move_ms: int, bank_ms: int, idle: Callable[[], None] | None = None
    ) -> tuple[int, str, float]:
        self.count += 1
        if len(legal) == 1:
            self.forced += 1
        if self.count == self.stale_at:
            move = legal[-1]
            return self.bot.abandon(view, legal, move), move, 0.0
        return self.bot.decide(view, legal, move_ms, bank_ms, idle)


class _Counter:
    """Observer for the bot under test: its decisions, the slowest, the kinds of moves."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.decisions = 0
        self.slowest = 0.0
        self.kinds: set[str] = set()

    def __call__(self, kind: str, item: dict[str, Any]) -> None:
        if kind == "move" and item["seat"] == self.seat and item["by"] == "bot":
            self.decisions += 1
            self.slowest = max(self.slowest, item["ms"])
            move = item["move"]
            if " " in move or move == "pass":
                self.kinds.add(move.split(" ")[0])
            else:
                self.kinds.add("capture" if "+" in move else "trail")


def check_bot(
    command: Annotated[str, typer.Argument(help="The bot command to check (quote it).")],
    move_ms: Annotated[int, typer.Option(help="Time per decision, ms.")] = Limits.move_ms,
    startup_ms: Annotated[int, typer.Option(help="Time to answer the handshake, ms.")] = Limits.startup_ms,
    logs: Annotated[Path | None, typer.Option(help="Folder for the bot's stderr log and the conversation log.")] = None,
) -> None:
    """Run a bot through a conformance script and report PASS/FAIL (exit 0 only on a pass)."""
    try:
        limits = Limits(startup_ms=startup_ms, move_ms=move_ms)
        spec = BotSpec.from_command(command, limits=limits)
    except ArenaError as exc:
        raise _fail(str(exc), 2) from None
    conv = _open_conversation(logs)
    bot = BotProcess(spec, stderr_dir=logs, log=ConversationLog(conv) if conv is not None else None)
    typer.echo(f"check-bot: {command}")
    try:
        with _exit_on_sigterm():
            problem = _conformance(bot, typer.echo)
    finally:
        bot.close()
        if conv is not None:
            conv.close()
    if problem is None:
        exited = "exits on goodbye" if bot.exited_on_goodbye else "did not exit on goodbye (killed; harmless)"
        typer.echo(f"  [ ok ] {exited}")
        typer.echo("result: PASS")
        return
    tail = bot.stderr_tail.strip().splitlines()[-5:]
    if tail:
        typer.echo("  bot's last stderr lines:")
        for line in tail:
            typer.echo(f"    {line}")
    typer.echo(f"result: FAIL ({problem})")
    raise typer.Exit(1)


def _conformance(bot: BotProcess, echo: Callable[[str], None]) -> str | None:
    """Run the script; returns the first problem found, or None on a pass."""
    limits = bot.limits

    def step(label: str, run: Callable[[], str]) -> str | None:
        start = time.monotonic()
        try:
            detail = run()
        except BotFailure as exc:
            echo(f"  [FAIL] {label}: {exc.termination.value}: {exc.detail}")
            return f"first problem: {exc.termination.value} in step '{label}'"
        echo(f"  [ ok ] {label} ({detail}; {(time.monotonic() - start) * 1000:.0f} ms)")
        return None

    def handshake() -> str:
        hello = {
            "protocol": 1,
            "seat": 0,
            "side": 0,
            "players": 2,
            "teams": [[0], [1]],
            "rules": Rules().to_dict(),
            "time": limits.time.to_dict(),
            "max_line_bytes": limits.max_line_bytes,
        }
        bot.seat = 0
        bot.send_hello(hello)
        ready: Ready = bot.await_ready()
        return f"ready, name {ready.name!r}"

    forced = [0]

    def match(seat: int, seating: Seating, rules: Rules, seed: int, stale_at: int = 0) -> Callable[[], str]:
        def run() -> str:
            probe = _Probe(bot, stale_at)
            players: list[Any] = [LocalBot(f"random{i}", seed=seed + i) for i in range(seating.players)]
            players[seat] = probe
            counter = _Counter(seat)
            record = play_match(players, rules, seating, seed, FailurePolicy("loss"), observer=counter)
            forced[0] += probe.forced
            outcome = record.outcomes[seat]
            if outcome.termination is not Termination.OK:
                raise BotFailure(outcome.termination, outcome.detail)
            kinds = ", ".join(sorted(counter.kinds))
            hands = record.result.hands
            return (
                f"{hands} hand{'s' if hands != 1 else ''}, {counter.decisions} decisions ({kinds}), "
                f"slowest {counter.slowest:.0f} ms"
            )

        return run

    variants = Rules(renuncio=True, initial_table="subset15", escoba_en_mano=True, target=11)
    steps: list[tuple[str, Callable[[], str]]] = [
        (f"handshake: ready within {limits.startup_ms} ms", handshake),
        ("1v1 match as seat 0, several deals", match(0, Seating.alone(2), Rules(target=6), 1)),
        ("new_match: 1v1 as seat 1", match(1, Seating.alone(2), Rules(target=6), 2)),
        ("3 players as seat 2, variant rules (renuncio, subset15, escoba en mano)", match(2, Seating.alone(3), variants, 3)),
        ("pairs as seat 1 with forced captures", match(1, Seating.pairs(4), Rules(forced_capture=True, target=6), 4)),
        (
            "stale request: one request abandoned at once, play goes on",
            match(0, Seating.alone(2), Rules(target=4), 5, stale_at=3),
        ),
    ]
    # The handshake step greets the bot for "match 1"; the first match then re-greets it
    # (new_match), which is exactly what a tournament does.
    for label, run in steps:
        problem = step(label, run)
        if problem is not None:
            return problem
    if forced[0] == 0:
        echo("  [FAIL] forced choice: no request with a single legal move came up")
        return "first problem: no forced choice came up"
    echo(f"  [ ok ] forced choices: {forced[0]} requests with a single legal move answered")
    return None


def register(app: typer.Typer) -> None:
    app.command("play")(play)
    app.command("check-bot")(check_bot)

"""``arena play``: one match between bot commands, shown as it goes; ``arena check-bot``: the
conformance check of one bot (``arena/match/conformance.py``), printed as a pass/fail report."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

import arena.cli.console as console
from arena.cli.seeds import ShowSeedOption, seed_text
from arena.core.cards import Card
from arena.core.rules import Rules, Seating
from arena.errors import ExitCode, InputError, WriteError
from arena.harness.protocol import Clock, Termination, TimeLimits
from arena.match.record import GameRecord, Policy

if TYPE_CHECKING:  # the referee and the script are loaded by the command that runs them, not by --help
    from arena.harness.botproc import BotSpec
    from arena.match.conformance import Step

_TIME = TimeLimits()  # the options' defaults, as a tournament's


def _open_conversation(logs: Path | None) -> IO[str] | None:
    """The conversation log file in ``logs`` (created), or None without ``--logs``."""
    if logs is None:
        return None
    try:
        logs.mkdir(parents=True, exist_ok=True)
        return open(logs / "conversation.log", "w", encoding="utf-8")
    except OSError as exc:
        raise WriteError(f"cannot write logs to {logs}: {exc.strerror or exc}") from None


def _parse_rule(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise InputError(f"expected KEY=VALUE (e.g. renuncio=true), got {text!r}")
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
        raise InputError(f"--pairs needs 4 or 6 bot commands, got {count}")
    if count in (2, 3, 4):
        return Seating.alone(count)
    if count == 6:
        raise InputError("6 players must play in teams: add --pairs")
    raise InputError(f"give 2, 3 or 4 bot commands (4 or 6 with --pairs), got {count}")


def _unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    from arena.harness.botproc import BotSpec

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


def _human_seat(commands: Sequence[str], seat: int | None, pairs: bool, as_json: bool) -> int | None:
    """The person's seat when ``human`` comes first (``arena play human CMD...``), else None."""
    from arena.cli.human import HUMAN

    if not commands or commands[0] != HUMAN:
        if seat is not None:
            raise InputError("--seat: only with a person playing (arena play human CMD...)")
        return None
    if as_json:
        raise InputError("--json: a person's seat shows the match as it goes; leave out --json")
    players = len(commands)
    seat = 0 if seat is None else seat
    if not 0 <= seat < players:
        raise InputError(f"--seat {seat}: this match has seats 0 to {players - 1}")
    if pairs and players not in (4, 6):
        raise InputError(f"--pairs needs 4 or 6 players (you and 3 or 5 bot commands), got {players}")
    return seat


def _human_player(seating: Seating, names: Sequence[str], limits: Any, timed: bool) -> Any:
    """The person's seat, on the wall clock with the bots' limits when ``--move-ms`` is given;
    else with no clock (its record says ``move_ms`` and ``bank_ms`` 0)."""
    from arena.cli.human import HumanSeat

    own = replace(limits, clock=Clock.WALL) if timed else replace(limits, move_ms=0, bank_ms=0, clock=Clock.WALL)
    return HumanSeat(seating, names, own, clock=timed)


class _Printer:
    """Shows a match as it goes: one line per play with the table after it, hand scores, result."""

    def __init__(self, names: Sequence[str], seating: Seating, echo: Callable[[str], None],
                 on_failure: Callable[[int], None] | None = None) -> None:
        self.names = names
        self.seating = seating
        self.echo = echo
        self.on_failure = on_failure  # told each failing seat first: it may stop the match (raise)
        self.table: list[str] = []
        self.pending_note = ""

    def side_name(self, side: int | None) -> str:
        if side is None:
            return "nobody"
        seats = self.seating.seats_of(side)
        return f"side {side} (" + " + ".join(self.names[s] for s in seats) + ")"

    def __call__(self, kind: str, item: dict[str, Any]) -> None:
        if kind == "failure":
            if self.on_failure is not None:
                self.on_failure(item["seat"])
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
                # Hands are numbered from 1 for people, as arena replay numbers them (the record counts from 0).
                self.echo(f"hand {item['hand'] + 1}: dealer seat {item['dealer']}, table {' '.join(self.table)}")
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
            self.echo(f"hand {item['hand'] + 1} points: {points}; match {totals}")


def _summary(record: GameRecord, seating: Seating, show_seed: bool) -> dict[str, Any]:
    result = record.result
    summary: dict[str, Any] = {
        "winner": result.winner,
        "winner_seats": list(seating.seats_of(result.winner)) if result.winner is not None else [],
        "scores": list(result.scores),
        "reason": result.reason,
        "hands": result.hands,
        "seed": record.seed,
        "seats": [o.to_dict() for o in record.outcomes],
    }
    if not show_seed:
        del summary["seed"]  # hidden: the key is left out (arena/cli/seeds.py)
    return summary


ClockOption = Annotated[Clock | None, typer.Option(
    "--clock", help="What move_ms measures: cpu (the bot's CPU time, with a wall-clock backstop) or wall "
                    "(default: cpu where this machine counts each bot's CPU time, else wall).", show_default=False)]


def play(
    commands: Annotated[list[str], typer.Argument(
        help="Bot commands, one per seat in play order (quote each); human first: a seat for you (--seat).")],
    pairs: Annotated[bool, typer.Option("--pairs", help="Play in teams: seats 0+2 vs 1+3 (or 3 teams of 2 with 6).")] = False,
    seed: Annotated[int | None, typer.Option(
        help="Match seed (default: random; printed with --show-seed, stored with --record).")] = None,
    target: Annotated[int | None, typer.Option(help="Points to win (rule option target, default 21).")] = None,
    rule: Annotated[list[str] | None, typer.Option(help="A rule option KEY=VALUE, e.g. renuncio=true; repeatable.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print only one JSON object with the result at the end (its seed with --show-seed).")] = False,
    move_ms: Annotated[int | None, typer.Option(
        help=f"Time per decision, ms (default {_TIME.move_ms}; a person's seat has no clock unless it is given).",
        show_default=False)] = None,
    bank_ms: Annotated[int, typer.Option(help="Extra time bank per bot per match, ms.")] = _TIME.bank_ms,
    startup_ms: Annotated[int, typer.Option(help="Time to answer the handshake, ms.")] = _TIME.startup_ms,
    grace_ms: Annotated[int, typer.Option(help="Tolerance added to every deadline, ms.")] = _TIME.grace_ms,
    policy: Annotated[
        Policy, typer.Option(help="On a bot failure: loss (its side loses) or substitute (a random move).")
    ] = Policy.LOSS,
    strikes: Annotated[int, typer.Option(help="With --policy substitute: failures substituted before the loss.")] = 3,
    record: Annotated[Path | None, typer.Option(help="Write the full game record (JSON) to this file.")] = None,
    logs: Annotated[Path | None, typer.Option(help="Folder for each bot's stderr log and the conversation log.")] = None,
    cpu: Annotated[
        int | None, typer.Option(help="Pin the arena and every bot to this CPU (faster hand-overs; bots share it).")
    ] = None,
    show_seed: ShowSeedOption = False,
    clock: ClockOption = None,
    seat: Annotated[int | None, typer.Option(
        "--seat", help="With human first: the person's seat (default 0); the bots take the others in order.",
        show_default=False)] = None,
) -> None:
    """Play one match between bot commands and show it as it goes. With human as the first
    command, one seat is yours, played at the terminal: arena play human CMD [CMD...]."""
    import sys

    from arena.harness.botproc import (
        BotProcess,
        BotSpec,
        CommandCannotStartError,
        ConversationLog,
        Limits,
        expand_python,
        missing_program,
    )
    from arena.harness.containment import clock_note, default_clock
    from arena.match.referee import FailurePolicy, Player, play_match
    from arena.render.text import match_end_text

    human = _human_seat(commands, seat, pairs, as_json)
    if human is not None:
        commands = commands[1:]
    seating = _seating(len(commands) + (human is not None), pairs)
    options = dict(_parse_rule(r) for r in rule or [])
    if target is not None:
        options["target"] = target
    rules = Rules.from_dict(options)
    limits = Limits(startup_ms=startup_ms, move_ms=_TIME.move_ms if move_ms is None else move_ms, bank_ms=bank_ms,
                    grace_ms=grace_ms, clock=clock or default_clock())
    fail_policy = FailurePolicy(policy, strikes)
    specs = _unique_names([BotSpec.from_command(expand_python(c, sys.executable), limits=limits) for c in commands])
    for spec in specs:
        problem = missing_program(spec.cmd, spec.cwd or os.getcwd(), dict(spec.env or {}))
        if problem:
            raise InputError(f"bot {spec.name!r}: {problem}")
    allowed = os.sched_getaffinity(0)
    if cpu is not None and cpu not in allowed:
        raise InputError(
            f"--cpu {cpu}: not one of the CPUs this process may use ({', '.join(map(str, sorted(allowed)))})"
        )
    if seed is None:
        # os.urandom, not the secrets module: the same bytes, without its import (hmac, hashlib).
        seed = int.from_bytes(os.urandom(8), "big") >> 1  # uniform below 2**63

    def echo(text: str) -> None:
        if not as_json:  # --json: only the result object at the end
            console.echo(text)

    names = [s.name for s in specs]
    if human is not None:
        from arena.cli.human import HUMAN

        names.insert(human, HUMAN)
    echo(f"{seed_text(seed, show_seed)}; " + ", ".join(f"seat {i}: {n}" for i, n in enumerate(names)))
    note = clock_note() if clock is None else None
    if note is not None:
        echo(note)
    conv = _open_conversation(logs)
    log = ConversationLog(conv) if conv is not None else None
    procs = [BotProcess(spec, stderr_dir=logs, log=log, cpus=None if cpu is None else [cpu]) for spec in specs]
    bots: list[Player] = list(procs)
    if human is not None:
        bots.insert(human, _human_player(seating, names, limits, move_ms is not None))
    try:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        def unstartable(seat: int) -> None:
            # The command line's fault, not a result (as arena run): the match stops before it is shown.
            bot = bots[seat]
            if isinstance(bot, BotProcess) and bot.cannot_start is not None:
                raise CommandCannotStartError(bot.spec.name, bot.cannot_start)

        # Ctrl-C, SIGTERM and SIGHUP stop the match through this finally (arena/cli/edge.py).
        game = play_match(bots, rules, seating, seed, fail_policy, observer=_Printer(names, seating, echo, unstartable))
    finally:
        os.sched_setaffinity(0, allowed)
        for proc in procs:
            proc.close()
        if conv is not None:
            conv.close()
    if record is not None:
        try:
            record.write_text(json.dumps(game.to_dict(), indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise WriteError(f"cannot write the record to {record}: {exc.strerror or exc}") from None
    summary = _summary(game, seating, show_seed)
    if as_json:
        console.echo(json.dumps(summary))
        return
    printer = _Printer(names, seating, echo)
    labels = [printer.side_name(side) for side in range(seating.sides)]
    console.echo(f"result: {match_end_text(game, seating, labels)}")
    for outcome in game.outcomes:
        if outcome.termination is not Termination.OK or outcome.strikes:
            console.echo(
                f"  seat {outcome.seat} {outcome.bot}: {outcome.termination.value} {outcome.detail} (strikes: {outcome.strikes})"
            )


# --- check-bot ---------------------------------------------------------------------------------


def _step_line(step: Step) -> str:
    if not step.passed:
        return f"  [FAIL] {step.label}: {step.detail}"
    if step.ms is None:
        return f"  [ ok ] {step.label}: {step.detail}"
    return f"  [ ok ] {step.label} ({step.detail}; {step.ms:.0f} ms)"


def _checked_spec(command: str, from_file: Path | None, startup_ms: int | None, move_ms: int | None) -> BotSpec:
    """The spec a tournament gives the bot: the worker's own (arena.tournament.worker), for the
    bot ``command`` names in the file ``from_file``, else for a bot that a tournament file
    gives only its ``cmd`` (and the time limits of the options), in this folder."""
    import sys

    from arena.harness.botproc import BotSpec, expand_python, missing_program
    from arena.tournament.config import BotConfig, load_config
    from arena.tournament.worker import bot_spec, make_job

    if from_file is None:
        name = BotSpec.from_command(expand_python(command, sys.executable)).name
        # A command that cannot start is bad input, as in arena play and a tournament file.
        problem = missing_program(expand_python(command, sys.executable), os.getcwd(), {})
        if problem:
            raise InputError(f"bot {name!r}: {problem}")
        bot = BotConfig(name, command, ".", base_dir=os.getcwd(), startup_ms=startup_ms, move_ms=move_ms)
        return bot_spec(bot, sys.executable)
    if startup_ms is not None or move_ms is not None:
        raise InputError("--from: the tournament file sets the bot's time limits; leave out --move-ms and --startup-ms")
    config = load_config(from_file)
    if all(b.name != command for b in config.bots):
        raise InputError(f"{from_file}: bots: no bot named {command!r} "
                         f"(the file has: {', '.join(b.name for b in config.bots)})")
    return make_job(config, python=sys.executable, logs_dir=None).bot(command)


def check_bot(
    command: Annotated[str, typer.Argument(help="The bot command to check (quote it).")],
    move_ms: Annotated[
        int | None, typer.Option(help=f"Time per decision, ms (default {_TIME.move_ms}, as in a tournament).")
    ] = None,
    startup_ms: Annotated[
        int | None, typer.Option(help=f"Time to answer the handshake, ms (default {_TIME.startup_ms}).")
    ] = None,
    logs: Annotated[Path | None, typer.Option(help="Folder for the bot's stderr log and the conversation log.")] = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from", help="A tournament file: COMMAND is then the name of one of its bots, checked with "
                     "exactly what a tournament gives it (its cmd, cwd, env, limits and sandbox)."),
    ] = None,
    clock: ClockOption = None,
) -> None:
    """Run a bot through a conformance script and report PASS/FAIL (exit 0 only on a pass)."""
    from arena.harness.botproc import BotProcess, CommandCannotStartError, ConversationLog

    spec = _checked_spec(command, from_file, startup_ms, move_ms)
    if clock is not None and spec.limits.clock is not clock:  # the option wins over the file's clock
        spec = replace(spec, limits=replace(spec.limits, clock=clock))
    conv = _open_conversation(logs)
    bot = BotProcess(spec, stderr_dir=logs, log=ConversationLog(conv) if conv is not None else None)
    console.echo(f"check-bot: {command}")
    try:
        # Ctrl-C, SIGTERM and SIGHUP stop the check through this finally (arena/cli/edge.py).
        from arena.match.conformance import check_bot as run_conformance

        verdict = run_conformance(bot, lambda step: console.echo(_step_line(step)))
    finally:
        bot.close()
        if conv is not None:
            conv.close()
    if bot.cannot_start is not None:  # the command's fault, as missing_program's: bad input, as arena run says
        raise CommandCannotStartError(spec.name, bot.cannot_start)
    if verdict.passed:
        exited = "exits on goodbye" if bot.exited_on_goodbye else "did not exit on goodbye (killed; harmless)"
        console.echo(f"  [ ok ] {exited}")
        console.echo("result: PASS")
        return
    tail = bot.stderr_tail.strip().splitlines()[-5:]
    if tail:
        console.echo("  bot's last stderr lines:")
        for line in tail:
            console.echo(f"    {line}")
        denied = ("Permission denied", "EACCES", "Read-only file system", "EROFS")
        if any(word in line for line in tail for word in denied):
            console.echo("  hint: a bot may change files only in $TMPDIR, /dev/shm and the folders its "
                       "`limits: {writable: [...]}` names (docs/PROTOCOL.md, \"Limits and containment\")")
    if verdict.hint is not None:
        console.echo(f"  hint: {verdict.hint}")
    console.echo(f"result: FAIL ({verdict.problem})")
    raise typer.Exit(ExitCode.CHECK_FAILED)


__all__ = ["check_bot", "play"]

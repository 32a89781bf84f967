"""A sequential test's numbers as text: the live status line, the final block in the format
fastchess prints (with fishtest's ``LLR (lower, upper) [elo0, elo1]``), and the decision.

Made here for every place that shows them: ``arena sprt`` and ``arena run`` (live and at the
end), ``arena table`` and the report page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.sprt import SprtParams, SprtSummary
    from arena.tournament.identity import BotIdentity
    from arena.tournament.sprt_run import SprtOutcome


def _bracket(params: SprtParams) -> str:
    return f"[{params.h0:g}, {params.h1:g}]"


def decision_text(summary: SprtSummary) -> str:
    """``H1 accepted at pair 312``, ``H0 accepted ...``, ``max_pairs reached ...`` or ``continue``."""
    value = summary.decision.value
    if value in ("H0", "H1"):
        return f"{value} accepted at pair {summary.decided_at}"
    if value == "max_pairs":
        return f"undecided: max_pairs reached at pair {summary.decided_at}"
    return "continue"


def status_text(summary: SprtSummary) -> str:
    """The one status line: pairs, pentanomial, Elo ±, nElo ±, LOS (points per hand for the
    points metric), LLR with its bounds and hypotheses, and the decision once made."""
    parts = [f"pairs {summary.pairs}", f"Ptnml {summary.penta}"]
    elo = summary.elo
    if elo is not None:
        parts += [f"Elo {elo.elo:.2f} ± {elo.elo_error:.2f}", f"nElo {elo.nelo:.2f} ± {elo.nelo_error:.2f}",
                  f"LOS {100 * elo.los:.1f}%"]
    if summary.params.metric.value == "points":
        points = summary.points
        parts.append("points/hand -" if points is None else f"points/hand {points.mean:+.3f} ± {points.error:.3f}")
    parts.append(f"LLR {summary.llr:.2f} ({summary.lower:.2f}, {summary.upper:.2f}) {_bracket(summary.params)}")
    if summary.decision.value != "continue":
        parts.append(decision_text(summary))
    return "  ".join(parts)


def status_json(summary: SprtSummary) -> dict[str, Any]:
    """The test's state for ``--progress jsonl`` (each match's line carries it as ``sprt``)."""
    return summary.to_dict()


def _ratio(a: float, b: float) -> str:
    if b == 0:
        return "-" if a == 0 else "inf"  # no decisive pair either way: no ratio
    return f"{a / b:.2f}"


def result_lines(summary: SprtSummary, candidate: str = "A", baseline: str = "B") -> list[str]:
    """The test's numbers as fastchess prints them at the end of a match (and fishtest's
    ``LLR (lower, upper) [elo0, elo1]``), then the decision."""
    from arena.sprt import Metric

    p = summary.params
    penta = summary.penta
    model = p.model.value if p.metric is Metric.ELO else "points per hand"
    lines = [f"Results of {candidate} vs {baseline} (SPRT {_bracket(p)} {model}, alpha {p.alpha:g}, beta {p.beta:g}"
             + (f", max_pairs {p.max_pairs}" if p.max_pairs is not None else "") + "):"]
    elo = summary.elo
    if elo is None:
        lines.append("Elo: -, nElo: - (no pairs)")
    else:
        pairs = penta.pairs
        lines.append(f"Elo: {_hundredths(elo.elo)} +/- {elo.elo_error:.2f}, "
                     f"nElo: {_hundredths(elo.nelo)} +/- {elo.nelo_error:.2f}")
        lines.append(f"LOS: {100 * elo.los:.2f} %, DrawRatio: {100 * penta.dd / pairs:.2f} %, "
                     f"PairsRatio: {_ratio(penta.wd + penta.ww, penta.ll + penta.ld)}")
        lines.append(f"Pairs: {pairs}, Games: {penta.games}, Points: {penta.points:.1f} "
                     f"({100 * penta.points / penta.games:.2f} %)")
    lines.append(f"Ptnml(0-2): [{', '.join(str(c) for c in penta.counts())}]")
    points = summary.points
    if points is not None:
        lines.append(f"Points per hand: {points.mean:+.4f} +/- {points.error:.4f} (sd {points.stdev:.3f} a pair, "
                     f"{points.pairs} pairs)")
    lines.append(f"LLR: {summary.llr:.2f} ({_share(summary):.1f}%) ({summary.lower:.2f}, {summary.upper:.2f}) "
                 f"[{p.h0:.2f}, {p.h1:.2f}]")
    value = summary.decision.value
    if value in ("H0", "H1"):
        counted = f"; {summary.pairs} pairs counted" if summary.pairs != summary.decided_at else ""
        lines.append(f"SPRT ({_bracket(p)}) completed - {value} was accepted at pair {summary.decided_at}{counted}")
    elif value == "max_pairs":
        lines.append(f"SPRT ({_bracket(p)}) stopped undecided: max_pairs ({p.max_pairs}) reached")
    else:
        lines.append(f"SPRT ({_bracket(p)}): no decision yet (LLR between the bounds)")
    return lines


def _share(summary: SprtSummary) -> float:
    """How far the LLR has gone towards the bound on its side, in percent (cutechess's and
    fastchess's "(100.3%)")."""
    bound = summary.upper if summary.llr >= 0 else summary.lower
    return 100 * summary.llr / bound if bound else 0.0


def outcome_lines(outcome: SprtOutcome, identities: dict[str, BotIdentity] | None = None) -> list[str]:
    """What a run, ``arena table`` and the report say at the end: the numbers, and which
    program each side is: its version label and identity key (docs/TOURNAMENTS.md, "Bot
    identities"; the key is what a league matches it by), and the full commit id of a bot
    from a revision."""
    lines = result_lines(outcome.summary, outcome.candidate, outcome.baseline)
    for role, name in (("A", outcome.candidate), ("B", outcome.baseline)):
        identity = (identities or {}).get(name)
        if identity is None:
            continue
        lines.append(f"{role} {name}: {identity.label}, identity {identity.key[:12]}"
                     + (f", commit {identity.commit}" if identity.commit else ""))
    if outcome.waiting:
        lines.append(f"note: {outcome.waiting} stored matches wait for the pairs before them (an interrupted run; "
                     "arena run resumes it)")
    elif outcome.summary.decision.value == "continue" and outcome.summary.pairs >= outcome.limit:
        lines.append(f"note: the schedule's limit of {outcome.limit} pairs is reached; the test ends undecided")
    return lines


def _hundredths(value: float) -> str:
    """``value`` to two decimals, never ``-0.00`` (all draws: an estimate of nothing, not below it)."""
    return f"{round(value, 2) + 0.0:.2f}"


__all__ = ["decision_text", "outcome_lines", "result_lines", "status_json", "status_text"]

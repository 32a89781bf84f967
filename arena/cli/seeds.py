"""How the console shows a seed: not at all, unless ``--show-seed`` asks for it.

Whoever knows a tournament's master seed knows every deal of it, the stock and the other
hands included, and a deal's seed gives that deal. The bots cannot read the tournament file
or its results folder, but a console log may be kept anywhere (a ``tee`` file, a CI log, a
transcript pasted into an issue) where a bot of a later run can read it. So the seeds stay
in the stored files and out of every console line, unless the user asks with ``--show-seed``.

That holds for a seed the user gave on the command line too (``arena play --seed 5``,
``arena sprt --seed N``): the user knows it, but a console log travels without the command
line that made it, and one rule, "never printed unless asked", is easier to trust than a
rule per origin. A command that must be typed again with the seed (the resume line of
``arena sprt --seed N``) shows ``SEED`` in its place.

Replays (``arena replay``) and exports (``arena export``) show what a stored record holds,
its seed among it, since that is what they are asked for: a replay shows every card the
seed deals anyway.
"""

from __future__ import annotations

from typing import Annotated

import typer

ShowSeedOption = Annotated[
    bool,
    typer.Option("--show-seed", help="Print the seed (and the deals' seeds) on the console; without it they are "
                                     "only in the stored files, as a console log may reach the bots."),
]

# Where a hidden seed stands in a line, and in a command to type again.
HIDDEN = "hidden (--show-seed)"
PLACEHOLDER = "SEED"


def seed_text(seed: int, show: bool) -> str:
    """``seed N`` for a header line, or that it is hidden."""
    return f"seed {seed if show else HIDDEN}"


def seed_argument(seed: int, show: bool) -> str:
    """The seed in a command printed for the user to run again: itself, or ``SEED``."""
    return str(seed) if show else PLACEHOLDER


__all__ = ["HIDDEN", "PLACEHOLDER", "ShowSeedOption", "seed_argument", "seed_text"]

"""Determinized Monte-Carlo search over a seat's view: the engine of the bundled expert bot
(bots/expert_bot.py) and of the analyst.

It deals the cards a seat has not seen into the other hands and the stock (a
"determinization"), plays each candidate move in that deal followed by a greedy playout, and
scores the outcome for the seat's side. It drives the rules core and nothing else: no file,
no process, no global random (every deal comes from a seeded ``Rng``); the clocks it reads
only cap a search.
"""

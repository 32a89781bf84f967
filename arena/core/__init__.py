"""The rules core: cards, rule options, seeding, moves, events, scoring, a seat's view, a hand
and a match. Pure: no I/O, no clock, no global random source. Every layer above drives it.

Bot authors' front doors are ``arena.game``, ``arena.rules`` and ``arena.seeding``.
"""

"""Tournaments: a YAML file in, ranked results out, nothing ever lost.

Layers, each importing only the ones above it:
  config     the tournament file -> a frozen, validated TournamentConfig (+ resume fingerprint)
  schedule   config -> the MatchSpecs (who sits where, which deal seed); pure. Its closed-form
             count of matches is the one thing config imports from it (to refuse a huge file)
  store      the single source of truth: one SQLite row per finished match
  standings  rows -> standings, crosstable and ratings; pure
  executors  play specs somewhere, stream finished matches back (local worker processes)
  worker     what a worker does: keep bot processes, referee one match
  runner     schedule - store = pending; play them; store each as it arrives
The CLI (arena/cli/tournament.py) sits on top and is the only part that prints.
"""

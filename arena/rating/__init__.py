"""Ratings: Elo-scale Bradley-Terry / Plackett-Luce fits with intervals (``table`` is the front
door and holds the values; ``fit`` and ``engine`` the numerics, loaded only when a fit runs), and
the CSV and JSON-lines inputs of ``arena rate``. Pure statistics: imports nothing of the arena but
its errors.
"""

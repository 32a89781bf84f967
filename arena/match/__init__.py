"""One match: its record (how it ended, the failure policy, the forfeit rule), the referee that
plays it between players, its replay and verification, and ``arena check-bot``'s script.

Imports the harness and the rules core.
"""

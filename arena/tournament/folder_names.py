"""The name of a results folder's store, for the modules below the store (store.py) that must
tell a results folder apart: a bot's ``inputs:`` never count one's files (buildspec.py)."""

from __future__ import annotations

STORE_FILE = "results.sqlite"

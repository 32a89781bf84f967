"""Bundled Escoba bots: the kit (kit/escoba_kit.py), the Python policies and in-process play (local.py)."""

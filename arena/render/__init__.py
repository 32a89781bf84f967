"""Presentation: tables in text, CSV and JSON; the terminal replay; the replay, report and league
pages with their assets (``web/``). Returns text; never prints (the command line does).
"""

"""Leagues: several tournaments' results folders (and result files) pooled into one rating
list, with each bot's versions as entries of their own. Reads results stores; presents nothing.
"""

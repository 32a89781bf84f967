"""The analyst's fixed budget and seed, apart from its engine: the command line's help names
them without loading the search (``arena --help`` starts fast)."""

# Deals per decision, every candidate played out on each. At this budget the analyst agrees
# with itself at twice the budget on the best move of most decisions, and its noise on a loss
# stays below the inaccuracy threshold (benchmarks/analyze.py; docs/ANALYSIS.md).
ANALYST_PLAYOUTS = 200
# The seed of the analyst's own deals; each decision's seed is derived from it.
ANALYST_SEED = 29

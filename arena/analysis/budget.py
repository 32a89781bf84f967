"""The analyst's fixed budget and seed, apart from its engine: the command line's help names
them without loading the search (``arena --help`` starts fast)."""

# Deals per decision, every candidate played out on each. At this budget the analyst agrees
# with itself at twice the budget on the best move of most decisions, and its noise on a loss
# stays below the inaccuracy threshold (benchmarks/analyze.py; docs/ANALYSIS.md).
ANALYST_PLAYOUTS = 200
# The seed of the analyst's own deals; each decision's seed is derived from it.
ANALYST_SEED = 29
# The analysed seat's own later moves in the playouts are played as the expert's search plays its
# own (arena.search.playout.wary_move, bots/expert_bot.py's default), so that the analyst
# judges a move by what the expert would make of it, at the larger budget above.
ANALYST_WARY = True
# The hand's last round against a seat that plays as the greedy bot does, solved exactly, as the
# expert's search solves it (arena.search.determinized.solve_end), in place of the sampled deals.
ANALYST_ENDGAME = True

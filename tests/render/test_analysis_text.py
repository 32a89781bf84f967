"""The text of ``arena analyze``: the worst moves and the line about the rest."""

from arena.analysis.analyst import Mark, MoveAnalysis
from arena.core.moves import Move
from arena.render.analysis_text import worst_moves


def _move(index: int) -> MoveAnalysis:
    played, best = Move.parse("1o"), Move.parse("7o")
    return MoveAnalysis(match="00000.0", index=index, seat=0, bot="b", legal=(played, best), values=(0.0, 1.0),
                        played=played, played_value=0.0, best=best, best_value=1.0, loss=1.0, mark=Mark.BLUNDER,
                        loss_by=(1.0,))


def test_the_line_about_the_rest_says_where_to_see_them_unless_that_page_is_being_written():
    moves = [_move(i) for i in range(5)]
    lines = worst_moves(moves, 3)
    assert len(lines) == 4
    assert lines[-1] == "... and 2 more marked moves (--html OUT with one match ID marks them on its replay page)"
    assert worst_moves(moves, 3, page_written=True)[-1] == "... and 2 more marked moves on the replay page"
    assert len(worst_moves(moves, 5)) == 5  # all shown: no such line

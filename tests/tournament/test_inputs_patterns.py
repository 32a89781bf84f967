"""``inputs:`` patterns matched in a bot's folder, which its author made: a folder that links back
to itself (a symlink to ``.`` or ``..``, or two of them) is walked once, not without end."""

from __future__ import annotations

import glob
import os

from arena.tournament.buildspec import match_inputs


def _tree(root):
    (root / "lib" / "deep").mkdir(parents=True)
    (root / "bot.py").write_text("import lib\n")
    (root / "lib" / "a.py").write_text("")
    (root / "lib" / "deep" / "b.py").write_text("")
    (root / "lib" / "notes.txt").write_text("")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "c.py").write_text("")
    (root / "lib" / ".d.py").write_text("")


def test_patterns_match_as_the_standard_glob_does(tmp_path):
    _tree(tmp_path)
    patterns = ("*.py", "**/*.py", "lib/*", "lib/**", "**", "lib/**/b.py", "**/deep/*.py", "lib/?.py",
                "lib/[ab].py", ".hidden/*.py", "lib/.d.py", "../" + tmp_path.name + "/bot.py", "nothing/*.py")
    for pattern in patterns:
        expected = {os.path.normpath(os.path.relpath(p, tmp_path))
                    for p in glob.glob(os.path.join(tmp_path, pattern), recursive=True) if os.path.isfile(p)}
        found, unmatched = match_inputs((pattern,), str(tmp_path))
        assert found == expected, pattern
        assert unmatched == ([] if expected else [pattern])


def test_a_folder_that_links_to_itself_is_walked_once(tmp_path):
    _tree(tmp_path)
    os.symlink(".", tmp_path / "again")
    found, _ = match_inputs(("**/*.py",), str(tmp_path))
    assert found == {"bot.py", "lib/a.py", "lib/deep/b.py"}


def test_many_links_back_do_not_multiply_the_walk(tmp_path):
    # Two links to the folder itself: the standard glob walks 2**40 paths before the kernel's
    # limit on symlinks stops it (a validate that never ends).
    _tree(tmp_path)
    for name in ("x", "y", "z"):
        os.symlink(".", tmp_path / name)
        os.symlink("..", tmp_path / "lib" / name)
    found, _ = match_inputs(("**/*.py", "**"), str(tmp_path))
    assert found == {"bot.py", "lib/a.py", "lib/deep/b.py", "lib/notes.txt"}


def test_a_linked_folder_that_is_no_loop_is_followed(tmp_path):
    _tree(tmp_path / "bot")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "s.py").write_text("")
    os.symlink(tmp_path / "shared", tmp_path / "bot" / "lib" / "shared")
    found, _ = match_inputs(("**/*.py",), str(tmp_path / "bot"))
    assert found == {"bot.py", "lib/a.py", "lib/deep/b.py", "lib/shared/s.py"}


def test_a_results_folder_inside_the_bots_folder_is_no_input(tmp_path):
    # A tournament file beside the bot writes its results there: with inputs: ["**"] its store
    # changed with every run, and so did the bot's identity (a new version each run).
    _tree(tmp_path)
    store = tmp_path / "results" / "mine"
    (store / "logs").mkdir(parents=True)
    (store / "results.sqlite").write_bytes(b"")
    (store / "logs" / "mybot.stderr.log").write_text("")
    (tmp_path / "results" / "notes.txt").write_text("")
    found, _ = match_inputs(("**",), str(tmp_path))
    assert found == {"bot.py", "lib/a.py", "lib/deep/b.py", "lib/notes.txt", "results/notes.txt"}
    found, unmatched = match_inputs(("results/mine/*",), str(tmp_path))
    assert found == set() and unmatched == ["results/mine/*"]

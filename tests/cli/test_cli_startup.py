"""Every command starts without the numerical libraries: only a rating fit or a sequential
test loads numpy (and scipy only for teams' perfect records and big groups): about a second
of start-up on the development machine. And
``arena --help`` loads no part of the arena that only a command's work needs (the referee,
bot processes, the runner, the store, the league): each command imports those when it runs.
benchmarks/RESULTS.md ("Start-up") has the times."""

import os
import subprocess
import sys

HEAVY = ("numpy", "scipy", "threadpoolctl")


def test_the_cli_imports_no_numerical_library():
    code = "import sys, arena.cli; print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})))"
    done = subprocess.run([sys.executable, "-c", code.format(heavy=set(HEAVY))], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ""


def test_a_fit_still_loads_them_and_rates():
    code = ("import sys; from arena.rating.table import PairResult, fit_ratings; "
            "t = fit_ratings([PairResult(('a',), ('b',), 1.0), PairResult(('b',), ('a',), 0.5)]); "
            "print(t['a'].elo > t['b'].elo, 'numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True"]


# What the command line's modules must not load just to be listed (``arena --help``).
RUN_ONLY = ("arena.match.referee", "arena.match.conformance", "arena.harness.botproc", "arena.harness.containment",
            "arena.tournament.runner", "arena.tournament.store", "arena.tournament.config", "arena.league.pools",
            "sqlite3", "yaml")


def test_the_cli_loads_what_a_command_runs_only_when_it_runs():
    code = "import sys, arena.cli; print(' '.join(sorted(m for m in {run_only!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code.format(run_only=RUN_ONLY)], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ""


def test_arena_help_lists_every_command_without_importing_one():
    code = ("import sys, typer; from arena.cli.app import app\n"
            "try:\n    typer.main.get_command(app).main(['--help'], prog_name='arena')\n"
            "except SystemExit:\n    pass\n"
            "print('LOADED', ' '.join(sorted(m for m in sys.modules if m.startswith('arena.cli.') and m not in "
            "('arena.cli.app', 'arena.cli.edge', 'arena.cli.console', 'arena.cli.starting') or m.split('.')[0] == 'rich')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    listed, loaded = done.stdout.split("LOADED")
    assert "check-bot" in listed and "export" in listed
    assert loaded.strip() == ""


def test_the_arena_script_run_by_a_relative_path_plays_on_its_workers(tmp_path):
    # `.venv/bin/arena run ...`, as the README says: the script's __file__ is absolute, argv[0]
    # is not, and a worker that ran the script again (to rebuild its main module) started a
    # fork server of its own while bootstrapping and died.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = Path(sys.executable).parent / "arena"
    bots = "\n".join(f"  - {{name: r{i}, cmd: $PYTHON bots/random_bot.py, cwd: {root}}}" for i in range(2))
    (tmp_path / "t.yaml").write_text(f"name: t\nseed: 3\nrules: {{target: 3}}\nconcurrency: 2\nmatches_per_pairing: 2\n"
                                     f"bots:\n{bots}\n")
    relative = os.path.relpath(script, tmp_path)
    done = subprocess.run([relative, "run", "t.yaml", "-o", "out", "--no-progress", "--no-report", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_a_run_plays_on_its_workers_under_a_temp_folder_too_deep_for_a_socket(tmp_path):
    # The fork server's socket lives under TMPDIR, and a socket's path holds 107 bytes: a CI
    # runner's folder like this one once left a run with no worker at all.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    bots = "\n".join(f"  - {{name: r{i}, cmd: $PYTHON bots/random_bot.py, cwd: {root}}}" for i in range(2))
    (tmp_path / "t.yaml").write_text(f"name: t\nseed: 3\nrules: {{target: 3}}\nconcurrency: 2\nmatches_per_pairing: 2\n"
                                     f"bots:\n{bots}\n")
    env = {**os.environ, "TMPDIR": str(deep)}
    script = str(Path(sys.executable).parent / "arena")
    done = subprocess.run([script, "run", "t.yaml", "-o", "out", "--no-progress", "--no-report", "--quiet"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    table = subprocess.run([script, "table", "out", "--format", "json"], cwd=tmp_path, capture_output=True,
                           text=True, check=True)
    import json

    assert sum(row["matches"] for row in json.loads(table.stdout)) == 2 * 2


def test_a_run_from_a_folder_holding_an_arena_folder_and_a_random_py_plays_on_the_arenas_own(tmp_path):
    # The fork server starts as `python -c`, the current folder first on its path, and imports
    # what a worker runs: run from a bot author's folder holding a random.py (or a folder named
    # arena), every worker imported those instead, and the run ended in an internal error.
    # The bots' own folders still come first for them: the greedy bot imports its kit from its own.
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "arena").mkdir()
    (tmp_path / "arena" / "__init__.py").write_text("raise SystemExit('the folder arena/ was imported')\n")
    (tmp_path / "random.py").write_text("raise SystemExit('the folder random.py was imported')\n")
    bots = "\n".join(f"  - {{name: {n}, cmd: $PYTHON bots/{n}_bot.py, cwd: {root}}}" for n in ("random", "greedy"))
    (tmp_path / "t.yaml").write_text(f"name: t\nseed: 3\nrules: {{target: 3}}\nconcurrency: 2\nmatches_per_pairing: 2\n"
                                     f"bots:\n{bots}\n")
    script = str(Path(sys.executable).parent / "arena")
    done = subprocess.run([script, "run", "t.yaml", "-o", "out", "--no-progress", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "imported" not in done.stdout + done.stderr
    table = subprocess.run([script, "table", "out", "--format", "json"], cwd=tmp_path, capture_output=True,
                           text=True, check=True)
    rows = json.loads(table.stdout)
    assert sum(row["matches"] for row in rows) == 2 * 2 and not any(row["failures"] for row in rows)
    verified = subprocess.run([script, "verify", "out"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0, verified.stderr[-2000:]

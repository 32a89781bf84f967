"""The seeds stay off the console unless ``--show-seed`` asks (arena/cli/seeds.py): a console
log kept where a bot can read it must not give away the deals. Every command that printed a
seed is run as a command, and its whole output (stdout and stderr) searched for the master
seed and for every deal seed of its schedule; with ``--show-seed`` they are there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from zoo.helpers import firstmove_bin

from arena.cli.seeds import seed_argument
from arena.tournament.config import load_config
from arena.tournament.schedule import build_schedule
from tests.cli_helpers import arena_command

ROOT = Path(__file__).resolve().parents[2]
# Long enough that no other number the arena prints can hold it by chance.
SEED = 7355608123456789


def arena(*args: str) -> str:
    done = arena_command(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def tournament(folder: Path, name: str = "t", extra: str = "matches_per_pairing: 2\n", bots: str = "abc") -> Path:
    bot = firstmove_bin()
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: {SEED}\nrules: {{target: 3}}\noutput: {folder / name}\nconcurrency: 2\n"
                    f"duplicate: true\n{extra}bots:\n"
                    + "".join(f"  - {{name: {label}, cmd: '{bot}'}}\n" for label in bots))
    return path


def secrets_of(path: Path, deals: int | None = None) -> list[str]:
    config = load_config(path)
    schedule = build_schedule(config) if deals is None else build_schedule(config, deals=deals)
    return [str(config.seed), *sorted({str(spec.seed) for spec in schedule})]


def shown(text: str, secrets: list[str]) -> list[str]:
    return [secret for secret in secrets if secret in text]


@pytest.mark.slow  # runs the arena as a command over real matches
def test_a_run_validate_and_dry_run_print_no_seed_unless_asked(tmp_path: Path):
    path = tournament(tmp_path)
    secrets = secrets_of(path)
    assert len(secrets) == 4  # the master seed and the 3 deals' seeds
    for args in (["validate", str(path)], ["run", str(path), "--dry-run"],
                 ["run", str(path), "-v", "--no-report"], ["run", str(path), "--dry-run"]):
        text = arena(*args)
        assert "seed hidden (--show-seed)" in text, (args, text)
        assert shown(text, secrets) == [], (args, text)
    with_seed = arena("validate", str(path), "--show-seed")
    assert shown(with_seed, secrets) == secrets and f"seed {SEED};" in with_seed
    assert shown(arena("run", str(path), "--dry-run", "--show-seed"), secrets) == secrets
    # Resumed, with nothing left to play: the header shows it when asked, as on the first run.
    assert f"seed {SEED};" in arena("run", str(path), "--show-seed", "--no-report")


@pytest.mark.slow  # runs the arena as a command over real matches
def test_the_store_keeps_the_seeds_the_console_hides(tmp_path: Path):
    from arena.tournament.store import ResultStore

    path = tournament(tmp_path)
    arena("run", str(path), "--no-report")
    with ResultStore.open_existing(str(tmp_path / "t")) as store:
        assert store.meta()["game"]["seed"] == SEED
        assert {str(row.seed) for row in store.iter_rows()} == set(secrets_of(path)[1:])


@pytest.mark.slow  # runs the arena as a command over real matches
def test_a_sequential_test_prints_no_seed_unless_asked(tmp_path: Path):
    path = tournament(tmp_path, "s", "format: sprt\nsprt: {elo0: 0, elo1: 200, max_pairs: 2}\n", bots="ab")
    secrets = secrets_of(path, deals=2)
    for args in (["validate", str(path)], ["run", str(path), "--dry-run"], ["run", str(path), "--no-report"]):
        text = arena(*args)
        assert "seed hidden (--show-seed)" in text and shown(text, secrets) == [], (args, text)
    assert shown(arena("validate", str(path), "--show-seed"), secrets) == secrets


@pytest.mark.slow  # runs the arena as a command over real matches
def test_arena_sprt_hides_even_a_seed_given_on_its_command_line(tmp_path: Path):
    bot = str(firstmove_bin())
    args = ["sprt", bot, bot, "--elo0", "0", "--elo1", "200", "--max-pairs", "1", "--seed", str(SEED), "-j", "1",
            "-o", str(tmp_path / "sprt"), "--no-report"]
    assert str(SEED) not in arena(*args)
    assert f"seed {SEED};" in arena(*args, "--show-seed")


@pytest.mark.slow  # runs the arena as a command over real matches
def test_arena_play_hides_its_seed_given_or_drawn_unless_asked(tmp_path: Path):
    bot = str(firstmove_bin())
    given = arena("play", bot, bot, "--seed", str(SEED), "--target", "1")
    assert given.startswith("seed hidden (--show-seed); seat 0") and str(SEED) not in given
    assert "seed" not in json.loads(arena("play", bot, bot, "--seed", str(SEED), "--target", "1", "--json"))
    drawn = arena("play", bot, bot, "--target", "1", "--record", str(tmp_path / "game.json"))
    assert drawn.startswith("seed hidden (--show-seed); seat 0")
    assert str(json.loads((tmp_path / "game.json").read_text())["seed"]) not in drawn  # the record keeps it
    assert arena("play", bot, bot, "--seed", str(SEED), "--target", "1", "--show-seed").startswith(f"seed {SEED}; ")
    summary = json.loads(arena("play", bot, bot, "--seed", str(SEED), "--target", "1", "--json", "--show-seed"))
    assert summary["seed"] == SEED


def test_the_resume_line_of_arena_sprt_names_a_hidden_seed_without_giving_it():
    from arena.cli.sprt import _resume_command
    from arena.sprt import SprtParams

    def resume(seed: str | None) -> str:
        return _resume_command("a", "b", SprtParams.elo(0, 10), None, None, None, None, None, None, ".", seed, None,
                               None, None)

    hidden = resume(seed_argument(SEED, False))
    assert str(SEED) not in hidden and hidden.endswith("--seed SEED (SEED: the --seed you gave)")
    assert resume(seed_argument(SEED, True)).endswith(f"--seed {SEED}")
    assert "--seed" not in resume(None) and "SEED" not in resume(None)

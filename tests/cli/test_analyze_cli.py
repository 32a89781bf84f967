"""``arena analyze`` from the command line: its outputs, the same analysis at any -j, bad input
as one line, the marked replay page, and (slow) the bundled bots ordered by their loss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay_helpers import make_store
from typer.testing import CliRunner

from arena.cli import app
from arena.search.evaluation import TERMS

cli = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
KEYS = ["bot", "decisions", "mean_loss", "inaccuracies", "mistakes", "blunders", *TERMS]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A results store of 6 short matches between seeded in-process random bots."""
    return Path(make_store(tmp_path_factory.mktemp("analyze"), rules={"target": 3}, matches=2))


def _ids(results: Path) -> list[str]:
    from arena.tournament.store import ResultStore

    with ResultStore.open_existing(str(results)) as store:
        return [row.id for row in store.results()]


def test_json_is_a_list_of_bots_with_their_keys_and_any_j_gives_the_same(results):
    first = _ids(results)[0]
    args = ["analyze", str(results), first, "--playouts", "6", "--format", "json"]
    one = cli.invoke(app, args + ["-j", "1"])
    assert one.exit_code == 0, one.output
    two = cli.invoke(app, args + ["-j", "2"])
    assert two.exit_code == 0, two.output
    assert one.stdout == two.stdout
    bots = json.loads(one.stdout)
    assert [list(b) for b in bots] == [KEYS] * len(bots) and len(bots) == 2
    assert all(b["decisions"] > 0 for b in bots)
    assert "decisions in 1 match," in one.stderr


def test_text_shows_the_table_the_thresholds_and_the_worst_moves(results):
    done = cli.invoke(app, ["analyze", str(results), *_ids(results)[:2], "--playouts", "4", "--bot", "ana"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].split() == KEYS
    assert lines[2].split()[0] == "ana" and len(lines) > 3
    assert "marks from a loss of: inaccuracy 0.2, mistake 0.5, blunder 1" in done.stdout


@pytest.mark.parametrize("args, said", [
    (["nope-id"], "no match 'nope-id'"),
    (["--bot", "nobody"], "--bot 'nobody': no such bot"),
    (["--html", "x.html"], "--html writes one match's replay page"),
])
def test_bad_input_is_one_line_and_exit_2(results, args, said):
    done = cli.invoke(app, ["analyze", str(results), *args, "--playouts", "2"])
    assert done.exit_code == 2
    assert said in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.output


def test_a_folder_that_holds_no_records_is_bad_input(tmp_path):
    done = cli.invoke(app, ["analyze", str(tmp_path)])
    assert done.exit_code == 2 and done.stderr.startswith("error: ") and done.stderr.count("\n") == 1


def test_the_replay_page_carries_the_analysed_moves(results, tmp_path):
    match = _ids(results)[1]
    page = tmp_path / "r.html"
    done = cli.invoke(app, ["analyze", str(results), match, "--playouts", "2", "--html", str(page)])
    assert done.exit_code == 0, done.output
    text = page.read_text()
    island = text.split('<script type="application/json" id="replay-analysis">', 1)[1].split("</script>", 1)[0]
    moves = json.loads(island)
    assert moves and {"move", "played", "best", "loss", "mark", "loss_by", "values"} <= set(moves[0])
    assert "analysisNote" in text  # the script that marks them


@pytest.mark.slow
def test_the_loss_orders_random_above_greedy_above_expert(tmp_path):
    bots = (("random", "bots/random_bot.py", ""), ("greedy", "bots/greedy_bot.py", ""),
            ("expert", "bots/expert_bot.py", " --playouts 200 --ms 250"))
    lines = [f"name: order\nseed: 7\noutput: {tmp_path / 'out'}\nconcurrency: 2\nrules: {{target: 4}}\n"
             "matches_per_pairing: 2\nbots:"]
    lines += [f'  - {{name: {n}, cmd: "$PYTHON {path}{args}", cwd: "{ROOT}", move_ms: 2000}}' for n, path, args in bots]
    (tmp_path / "t.yaml").write_text("\n".join(lines) + "\n")
    run = cli.invoke(app, ["run", str(tmp_path / "t.yaml"), "--quiet", "--no-report"])
    assert run.exit_code == 0, run.output
    done = cli.invoke(app, ["analyze", str(tmp_path / "out"), "--playouts", "24", "-j", "2", "--format", "json"])
    assert done.exit_code == 0, done.output
    loss = {b["bot"]: b["mean_loss"] for b in json.loads(done.stdout)}
    assert loss["random"] > loss["greedy"] > loss["expert"], loss


def test_a_bot_with_several_versions_asks_which_one(results, tmp_path):
    # Records of two versions of ana (as a folder where ana changed shows them): --bot ana names them.
    from arena.tournament.store import ResultStore

    with ResultStore.open_existing(str(results)) as store:
        for i, row in enumerate(list(store.results())[:2]):
            record = store.record(row.id)
            version = f"ana@{i + 1}.0"
            record["seats"] = [version if seat == "ana" else seat for seat in record["seats"]]
            for outcome in record["outcomes"]:
                outcome["bot"] = version if outcome["bot"] == "ana" else outcome["bot"]
            (tmp_path / f"m{i}.json").write_text(json.dumps(record))
    done = cli.invoke(app, ["analyze", str(tmp_path), "--bot", "ana", "--playouts", "2"])
    assert done.exit_code == 2
    assert done.stderr == "error: --bot 'ana': it has 2 versions in these matches; name one: ana@1.0, ana@2.0\n"
    assert cli.invoke(app, ["analyze", str(tmp_path), "--bot", "ana@2.0", "--playouts", "2"]).exit_code == 0

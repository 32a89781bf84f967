"""Landlock (arena/harness/sandbox.py): a bot cannot write the user's files, signal or read its
opponent, or signal its launcher; what it may write is its configuration's ``writable``.

Every attack is a hostile bot of the zoo (tests/zoo/hostile.py) that reports to a file what it
managed, played through the real launcher against a bot that plays well.
"""

import os
import subprocess
import sys
import textwrap

import pytest
from zoo.helpers import HOSTILE, ROOT, hostile_spec, new_token, survivors, wait_until

from arena.core.rules import Rules, Seating
from arena.harness import containment, sandbox
from arena.harness.botproc import BotProcess
from arena.harness.local_bot import LocalBot
from arena.harness.protocol import Termination
from arena.harness.resources import ResourceLimitError, ResourceLimits
from arena.match.referee import play_match
from arena.tournament.config import ConfigError, load_config

# Slow: starts launchers and bot processes. Unsealed: these test the containment of a bot the machine cannot seal
# (tests/conftest.py, ``unsealed``).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("unsealed")]

ABI = sandbox.abi()
needs_landlock = pytest.mark.skipif(ABI < 6, reason=f"Landlock ABI {ABI}: signals are confined from ABI 6 (Linux 6.12)")
RULES = Rules(target=6)


@pytest.fixture
def outside(tmp_path_factory):
    """A folder the bots may not write in: in /tmp, beside their own TMPDIRs, as a project
    cloned there would be (not in tmp_path, where the bots write their reports)."""
    return tmp_path_factory.mktemp("outside")


def play(attacker, victim=None):
    """One short match: ``attacker`` in seat 0 against ``victim`` (or an in-process bot)."""
    bots = [BotProcess(attacker), BotProcess(victim) if victim is not None else LocalBot("local", seed=1)]
    try:
        return play_match(bots, RULES, Seating.alone(2), seed=3)
    finally:
        for bot in bots:
            if isinstance(bot, BotProcess):
                bot.close()


def test_the_containment_line_says_whether_landlock_is_in_force():
    line = containment.containment_line()
    assert sandbox.describe(ABI) in line
    assert ("no Landlock" in line) == (ABI == 0)


def test_writable_folders_are_taken_from_the_bots_folder():
    limits = ResourceLimits(writable=("data", "/srv/bot"))
    assert limits.writable_folders("/home/me/bot") == ["/home/me/bot/data", "/srv/bot"]
    assert ResourceLimits.from_dict({"writable": ["a"]}).writable == ("a",)
    assert ResourceLimits().to_dict()["writable"] == [] and ResourceLimits().writable_folders("/x") == []
    with pytest.raises(ResourceLimitError, match="writable"):
        ResourceLimits(writable=("",))


def test_a_tournament_file_names_writable_folders_and_a_wrong_one_gets_a_clear_error(tmp_path):
    (tmp_path / "bot.py").write_text("")
    good = tmp_path / "good.yaml"
    good.write_text(textwrap.dedent("""\
        name: t
        seed: 1
        bots:
          - {name: a, cmd: "python3 bot.py", limits: {writable: [data, /srv/x]}}
          - {name: b, cmd: "python3 bot.py"}
        """))
    config = load_config(good)
    assert dict(config.bots[0].limits)["writable"] == ("data", "/srv/x")
    assert "writable" not in dict(config.bots[1].limits)
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("[data, /srv/x]", "5"))
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert "bots[0].limits.writable" in str(info.value) and "list of folder paths" in str(info.value)


@pytest.mark.skipif(ABI < 1, reason="no Landlock on this kernel")
def test_a_bot_cannot_write_outside_its_own_temporary_folder_even_in_tmp(outside, tmp_path):
    target = outside / "results.sqlite"
    target.write_text("true results\n")
    report = tmp_path / "report"
    spec = hostile_spec("write_outside", new_token(), env={"ZOO_OUT": str(report), "ZOO_TARGET": str(target)})
    record = play(spec)
    assert record.outcomes[0].termination is Termination.OK  # refused, it plays on
    assert report.read_text().startswith("refused") and "Permission denied" in report.read_text()
    assert target.read_text() == "true results\n"
    assert not (outside / "results.sqlite.forged").exists()


@pytest.mark.skipif(ABI < 1, reason="no Landlock on this kernel")
def test_a_bot_writes_where_its_limits_say(outside, tmp_path):
    target = outside / "notes.txt"
    report = tmp_path / "report"
    spec = hostile_spec("write_outside", new_token(), env={"ZOO_OUT": str(report), "ZOO_TARGET": str(target)},
                        resources=ResourceLimits(writable=(str(outside),)))
    record = play(spec)
    assert record.outcomes[0].termination is Termination.OK
    assert report.read_text().startswith("done wrote")
    assert target.read_text() == "forged\n" and (outside / "notes.txt.forged").exists()


@needs_landlock
@pytest.mark.parametrize("mode", ["kill_launcher", "stop_launcher"])
def test_a_bot_cannot_signal_its_launcher(mode, tmp_path):
    report = tmp_path / "report"
    token = new_token()
    before = containment.launcher()
    record = play(hostile_spec(mode, token, n=2, env={"ZOO_OUT": str(report)}))
    assert record.outcomes[0].termination is Termination.OK, record.outcomes[0]
    assert report.read_text().startswith("refused") and "Operation not permitted" in report.read_text()
    assert containment.launcher() is before and before.alive and before.check()
    assert wait_until(lambda: survivors(token) == [])


@needs_landlock
def test_a_bot_cannot_stop_its_opponent(tmp_path):
    report = tmp_path / "report"
    victim_token = new_token()
    attacker = hostile_spec("stop_opponent", new_token(), n=2, env={"ZOO_OUT": str(report), "ZOO_VICTIM": victim_token})
    victim = hostile_spec("victim", victim_token)
    record = play(attacker, victim)
    assert [o.termination for o in record.outcomes] == [Termination.OK, Termination.OK], record.outcomes
    assert report.read_text().startswith("refused") and "Operation not permitted" in report.read_text()


# Both bots on the network for the memory attack: without it, an arena that is not root puts
# each bot in a user namespace of its own (for its network namespace), and the kernel refuses
# a process of one user namespace the memory of a process of another it holds no privilege
# over, Landlock or not (EACCES). On it, Landlock alone stands between the two bots, as it
# does between every unsealed bot of an arena run as root.
ON_THE_NETWORK = ResourceLimits(network=True)


@pytest.mark.skipif(ABI < 1, reason="no Landlock on this kernel")
def test_a_bot_cannot_read_its_opponents_memory(tmp_path):
    report = tmp_path / "report"
    victim_token = new_token()
    attacker = hostile_spec("read_opponent", new_token(), n=2, env={"ZOO_OUT": str(report), "ZOO_VICTIM": victim_token},
                            resources=ON_THE_NETWORK)
    record = play(attacker, hostile_spec("victim", victim_token, resources=ON_THE_NETWORK))
    assert [o.termination for o in record.outcomes] == [Termination.OK, Termination.OK], record.outcomes
    assert report.read_text().startswith("refused") and "Permission denied" in report.read_text()


def test_the_attacks_succeed_without_landlock_so_the_tests_above_can_fail(monkeypatch, tmp_path, outside):
    """Without Landlock the same bots do what they try: the refusals above are Landlock's."""
    containment.shutdown()
    monkeypatch.setenv(containment.LANDLOCK_ENV, "off")
    try:
        assert "no Landlock" in containment.containment_line()
        target = outside / "results.sqlite"
        target.write_text("true results\n")
        report = tmp_path / "report"
        play(hostile_spec("write_outside", new_token(), env={"ZOO_OUT": str(report), "ZOO_TARGET": str(target)}))
        assert report.read_text().startswith("done wrote") and target.read_text().endswith("forged\n")
        victim_token = new_token()
        play(hostile_spec("read_opponent", new_token(), n=2, env={"ZOO_OUT": str(report), "ZOO_VICTIM": victim_token},
                          resources=ON_THE_NETWORK),
             hostile_spec("victim", victim_token, resources=ON_THE_NETWORK))
        assert report.read_text().startswith("done read ["), report.read_text()
        victim_token = new_token()
        record = play(hostile_spec("stop_opponent", new_token(), n=2, env={"ZOO_OUT": str(report), "ZOO_VICTIM": victim_token}),
                      hostile_spec("victim", victim_token))
        assert report.read_text().startswith("done stopped ["), report.read_text()
        assert record.outcomes[1].termination is Termination.TIMEOUT, record.outcomes  # stopped, it lost on time
    finally:
        containment.shutdown()


def _run_spy(tmp_path, monkeypatch=None):
    """``arena run`` of a tournament kept in a git repository, with a bot that tries to read
    the tournament's file, its results folder and the repository's history: what it reports."""
    project = tmp_path / "project"
    (project / "tournaments").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    reports = tmp_path / "reports"
    reports.mkdir()
    output = project / "results" / "spy"
    yaml = project / "tournaments" / "spy.yaml"
    secrets = os.pathsep.join([str(yaml), str(output), str(project / ".git")])
    yaml.write_text(textwrap.dedent(f"""\
        name: spy
        seed: 5
        rules: {{target: 6}}
        matches_per_pairing: 2
        output: {output}
        bots:
          - {{name: greedy, cmd: "$PYTHON bots/greedy_bot.py", cwd: "{ROOT}"}}
          - name: spy
            cmd: "$PYTHON {HOSTILE} read_secrets {new_token()} 1"
            cwd: "{ROOT}"
            env: {{ZOO_OUT: "{reports / 'spy'}", ZOO_SECRETS: "{secrets}"}}
            limits: {{writable: ["{reports}"]}}
        """))
    subprocess.run(["git", "-C", str(project), "add", "."], check=True)
    subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"],
                   check=True)
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(yaml), "--no-progress"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return (reports / "spy").read_text().splitlines(), output


@pytest.mark.skipif(ABI < 1, reason="no Landlock on this kernel")
def test_a_bot_cannot_read_the_seed_or_the_stored_games(tmp_path):
    lines, output = _run_spy(tmp_path)
    assert len(lines) == 4 and all("refused Permission denied" in line for line in lines[:3]), lines
    assert any(output.iterdir())  # the arena itself wrote there
    # Its temporary files go to a TMPDIR of its own, gone with it.
    made = lines[3].removeprefix("temporary: made in ")
    assert made != lines[3] and os.path.basename(made).startswith("escoba-arena-"), lines[3]
    assert not os.path.exists(made)


def test_without_landlock_the_same_bot_reads_them(tmp_path, monkeypatch):
    monkeypatch.setenv(containment.LANDLOCK_ENV, "off")
    lines, _ = _run_spy(tmp_path)
    assert len(lines) == 4 and all(": read " in line for line in lines[:3]), lines


@pytest.mark.parametrize("version", range(1, 8))
def test_every_rule_grants_only_rights_its_ruleset_handles_at_every_abi(version, tmp_path):
    """The kernel refuses a rule with a right its ruleset does not handle: older kernels
    (an older ABI) handle fewer rights, and the rules must follow."""
    (tmp_path / "results").mkdir()
    (tmp_path / "bots").mkdir()
    granted = sandbox.rules(version, ["/tmp", str(tmp_path)], hidden=[str(tmp_path / "results")])
    handled = sandbox._handled(version) | sandbox._READ
    assert granted and all(rights & ~handled == 0 for rights in granted.values())
    # The hidden folder is in no rule's hierarchy; its neighbours are.
    assert not any(str(tmp_path / "results").startswith(path + "/") or path.startswith(str(tmp_path / "results"))
                   for path in granted if path != "/")
    assert str(tmp_path / "bots") in granted and str(tmp_path) not in granted


@pytest.mark.skipif(ABI < 1, reason="no Landlock on this kernel")
def test_check_bot_says_where_a_bot_may_write_when_it_fails_on_a_refused_file(outside, tmp_path):
    bot = tmp_path / "writer.py"
    bot.write_text(f"open({str(outside / 'debug.log')!r}, 'a')\n")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "check-bot", f"{sys.executable} {bot}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "PermissionError" in done.stdout and "hint: a bot may change files only in $TMPDIR" in done.stdout, done.stdout

"""A bot's identity: which files a command names, what changed between two identities,
and the value's round trip through JSON."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from arena.tournament.config import ConfigError, load_config
from arena.tournament.identity import BotIdentity, identify_bot, identity_changes, program_files


@pytest.mark.parametrize("cmd, files", [
    ("python3 bot.py", ("bot.py",)),
    ("$PYTHON bots/expert_bot.py --ms 20", ("bots/expert_bot.py",)),
    ("node bots/js/bot.js", ("bots/js/bot.js",)),
    ("java bots/java/EscobaBot.java", ("bots/java/EscobaBot.java",)),
    ("java -jar bots/java/escoba.jar", ("bots/java/escoba.jar",)),
    ("perl bots/perl/random.pl", ("bots/perl/random.pl",)),
    ("./bots/c/firstmove.bin --fast", ("./bots/c/firstmove.bin",)),
    (("/opt/bot/run", "lib/x.py", "--opt=y.py", "-v.py"), ("/opt/bot/run", "lib/x.py")),
    ("java -cp classes EscobaBot", ()),
    ("python3 bot.py | tee log", ()),  # a shell line: the shell decides what runs
])
def test_the_files_a_command_names(cmd, files):
    assert program_files(cmd) == files


def write_bot(tmp_path: Path, source: str, cmd: str = "python3 bot.py") -> Path:
    (tmp_path / "bot.py").write_text(source)
    (tmp_path / "other.py").write_text("")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nseed: 1\nbots:\n  - {{name: b, cmd: {cmd}}}\n  - {{name: o, cmd: python3 other.py}}\n")
    return path


def test_the_same_files_give_the_same_identity(tmp_path):
    path = write_bot(tmp_path, "print('v1')\n")
    one, two = identify_bot(load_config(path).bot("b")), identify_bot(load_config(path).bot("b"))
    assert one == two and hash(one) == hash(two) and identity_changes(one, two) == []
    assert one.files[0][0] == "bot.py" and len(one.files[0][1] or "") == 64
    assert one.commit is None and one.ready_name is None and one.inputs_sha256 is None


def test_a_changed_program_file_is_a_different_identity_with_the_reason(tmp_path):
    path = write_bot(tmp_path, "print('v1')\n")
    old = identify_bot(load_config(path).bot("b"))
    (tmp_path / "bot.py").write_text("print('v2')\n")
    new = identify_bot(load_config(path).bot("b"))
    assert old != new and old.label != new.label
    [reason] = identity_changes(old, new)
    a, b = dict(old.files)["bot.py"], dict(new.files)["bot.py"]
    assert reason == f"program file bot.py changed (sha256 {a[:12]}.. -> {b[:12]}..)"


def test_a_changed_command_and_a_missing_file_are_named(tmp_path):
    path = write_bot(tmp_path, "")
    old = identify_bot(load_config(path).bot("b"))
    (tmp_path / "v2.py").write_text("x = 2\n")
    path.write_text(path.read_text().replace("{name: b, cmd: python3 bot.py}", "{name: b, cmd: python3 v2.py}"))
    new = identify_bot(load_config(path).bot("b"))
    # The same command but for where its script is: the script counts by its content.
    assert identity_changes(old, new) == [
        f"program file bot.py (now v2.py) changed (sha256 {dict(old.files)['bot.py'][:12]}.. -> "
        f"{dict(new.files)['v2.py'][:12]}..)",
    ]
    path.write_text(path.read_text().replace("{name: b, cmd: python3 v2.py}", "{name: b, cmd: python3 v2.py --fast}"))
    other = identify_bot(load_config(path).bot("b"))
    assert identity_changes(old, other) == [
        "command changed ('python3 bot.py' -> 'python3 v2.py --fast')",
        "program file bot.py is no longer run",
        f"program file v2.py is new (sha256 {dict(new.files)['v2.py'][:12]}..)",
    ]
    (tmp_path / "v2.py").unlink()
    gone = BotIdentity.from_dict({**new.to_dict(), "files": {"v2.py": None}})
    assert identity_changes(new, gone) == [f"program file v2.py changed (sha256 {dict(new.files)['v2.py'][:12]}.. -> missing)"]


def test_build_inputs_count_for_a_bot_whose_command_names_no_file(tmp_path):
    (tmp_path / "Bot.java").write_text("class Bot {}\n")
    path = write_bot(tmp_path, "", cmd="java -cp classes Bot, build: javac -d classes Bot.java")
    old = identify_bot(load_config(path).bot("b"))
    assert old.files == () and old.inputs_sha256 is not None
    (tmp_path / "Bot.java").write_text("class Bot { }\n")
    new = identify_bot(load_config(path).bot("b"))
    assert identity_changes(old, new) == [
        f"build inputs changed (sha256 {old.inputs_sha256[:12]}.. -> {new.inputs_sha256[:12]}..)"]


def test_what_a_bot_writes_in_its_writable_folder_is_never_its_input(tmp_path):
    # inputs: ["**"] beside a writable folder where the bot keeps what it learns: each run wrote
    # there, so each run found a new version and played its schedule again.
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "book.json").write_text("{}")
    path = write_bot(tmp_path, "print('v1')\n", cmd="python3 bot.py, inputs: ['**'], limits: {writable: [state]}")
    old = identify_bot(load_config(path).bot("b"))
    (tmp_path / "state" / "book.json").write_text('{"learned": 1}')
    (tmp_path / "state" / "more.json").write_text("{}")
    assert identity_changes(old, identify_bot(load_config(path).bot("b"))) == []
    (tmp_path / "other.py").write_text("print('changed')\n")  # outside it, still an input
    assert identity_changes(old, identify_bot(load_config(path).bot("b")))[0].startswith("inputs changed")
    # A pattern that matches only what the bot writes matches none of its files.
    only = tmp_path / "only.yaml"
    only.write_text(path.read_text().replace("inputs: ['**']", "inputs: ['state/*.json']"))
    with pytest.raises(ConfigError, match=r"key 'bots\[0\]\.inputs'"):
        load_config(only)


def test_an_unbuilt_bots_inputs_are_part_of_its_identity(tmp_path):
    # A script that imports a module of its own: the module is what runs as much as the script.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "brain.py").write_text("DEPTH = 1\n")
    path = write_bot(tmp_path, "import lib.brain\n", cmd="python3 bot.py, inputs: ['lib/*.py']")
    bot = load_config(path).bot("b")
    assert bot.build is None and bot.inputs == ("lib/*.py",) and bot.to_dict()["inputs"] == ["lib/*.py"]
    old = identify_bot(bot)
    assert old.inputs_sha256 is not None and not old.built
    assert identity_changes(old, identify_bot(load_config(path).bot("b"))) == []
    (tmp_path / "lib" / "brain.py").write_text("DEPTH = 2\n")
    new = identify_bot(load_config(path).bot("b"))
    assert new.key != old.key
    assert identity_changes(old, new) == [f"inputs changed (sha256 {old.inputs_sha256[:12]}.. -> {new.inputs_sha256[:12]}..)"]
    # Without the key the module is not seen: the same identity after its change.
    path.write_text(path.read_text().replace(", inputs: ['lib/*.py']", ""))
    plain = identify_bot(load_config(path).bot("b"))
    (tmp_path / "lib" / "brain.py").write_text("DEPTH = 3\n")
    assert plain.key == identify_bot(load_config(path).bot("b")).key and plain.inputs_sha256 is None
    assert identity_changes(plain, new) == [f"inputs changed (none declared -> sha256 {new.inputs_sha256[:12]}..)"]


def test_an_identity_is_a_plain_json_value_and_the_ready_name_counts_once_known(tmp_path):
    ident = identify_bot(load_config(write_bot(tmp_path, "x = 1\n")).bot("b"))
    assert BotIdentity.from_dict(json.loads(json.dumps(ident.to_dict()))) == ident
    assert ident.label == f"b@{ident.key[:7]}" and ident.to_dict()["identity"] == ident.key
    named = ident.with_ready_name("mybot 1.0")
    assert named.label == "b@1.0" and named.version == "1.0" and named.key == ident.key
    assert ident.with_ready_name("policybot-greedy").label == f"b@{ident.key[:7]}"  # no version given
    assert identity_changes(ident, named) == []  # not known on one side: not compared
    assert identity_changes(named, ident.with_ready_name("mybot 1.1")) == ["ready name changed ('mybot 1.0' -> 'mybot 1.1')"]
    assert len({ident, named, ident.with_ready_name("mybot 1.0")}) == 2
    with_commit = BotIdentity.from_dict({**ident.to_dict(), "commit": "a" * 40})
    assert with_commit.label == "b@aaaaaaa"
    assert identity_changes(ident, with_commit) == ["now from revision aaaaaaaaaaaa"]


def test_a_label_names_the_bot_as_the_file_does_and_takes_only_a_version_from_the_bot(tmp_path):
    # A bot configured as evil that answers ready as "greedy 1.0" is evil@1.0, never greedy's:
    # labels are what tables, exports and leagues tell bots apart by.
    ident = identify_bot(load_config(write_bot(tmp_path, "x = 1\n")).bot("b"))
    assert ident.with_ready_name("greedy 1.0").label == "b@1.0"
    assert replace(ident, name="b~2").with_ready_name("greedy 1.0").label == "b@1.0"
    assert ident.with_ready_name("greedy").label == f"b@{ident.key[:7]}"


def test_a_label_holds_only_what_a_bot_name_may_hold(tmp_path):
    # A label is a side in an export (team members joined by "+") that arena rate reads back:
    # a ready name's word that is no bot name gives way to the file's name, and a version's
    # build metadata (semver's 1.0.0+build) is left out.
    ident = identify_bot(load_config(write_bot(tmp_path, "x = 1\n")).bot("b"))
    assert ident.with_ready_name("evil+greedy 1.0").label == "b@1.0"
    assert ident.with_ready_name("a,b 2.0").label == "b@2.0"
    assert ident.with_ready_name("\x1b[31mred 2.0").label == "b@2.0"
    semver = ident.with_ready_name("mybot 1.0.0+build.7")
    assert semver.label == "b@1.0.0" and semver.version == "1.0.0"
    assert ident.with_ready_name("mybot 1.0+").label == "b@1.0"
    assert "+" not in ident.with_ready_name("mybot +1").label


@pytest.mark.parametrize("cmd, cwd", [
    ("$PYTHON bot.py", "."),
    ("/usr/bin/python3.11 {root}/bot.py", "/"),
    ("python3 ../bot.py", "sub"),
    ("[python3, link.py]", "."),
])
def test_one_program_under_any_spelling_of_its_command_is_one_identity(tmp_path, cmd, cwd):
    root = tmp_path / "t"
    root.mkdir()
    (root / "sub").mkdir()
    (root / "link.py").symlink_to(root / "bot.py")
    reference = identify_bot(load_config(write_bot(root, "print('v1')\n")).bot("b"))
    path = root / "u.yaml"
    path.write_text(f"name: u\nseed: 1\nbots:\n  - {{name: b, cmd: {cmd.format(root=root)}, cwd: {cwd}}}\n"
                    "  - {name: o, cmd: python3 other.py}\n")
    spelled = identify_bot(load_config(path, check_commands=False).bot("b"))
    assert (spelled.cmd, spelled.files) != (reference.cmd, reference.files)
    assert spelled.key == reference.key and identity_changes(reference, spelled) == []


def test_what_runs_makes_a_new_identity_the_arguments_and_environment_included(tmp_path):
    path = write_bot(tmp_path, "print('v1')\n")
    base = identify_bot(load_config(path).bot("b"))
    text = path.read_text()
    keys = {base.key}
    for entry in ("{name: b, cmd: python3 bot.py --fast}", "{name: b, cmd: python3 bot.py, env: {LEVEL: 3}}",
                  "{name: b, cmd: node bot.py}"):
        path.write_text(text.replace("{name: b, cmd: python3 bot.py}", entry))
        other = identify_bot(load_config(path, check_commands=False).bot("b"))
        assert identity_changes(base, other), entry
        keys.add(other.key)
    assert len(keys) == 4


def test_an_identity_recorded_by_an_older_arena_gets_its_key_from_its_bots_settings(tmp_path):
    bot = load_config(write_bot(tmp_path, "print('v1')\n")).bot("b")
    new = identify_bot(bot)
    old = {key: value for key, value in new.to_dict().items() if key not in ("env", "built", "identity")}
    recorded = BotIdentity.from_dict(old)
    assert recorded.env is None and "identity" not in recorded.to_dict()
    assert recorded.fill_from(bot).key == new.key and identity_changes(recorded.fill_from(bot), new) == []


def _claiming(name: str, program: str, ready: str) -> BotIdentity:
    return BotIdentity(name, f"$PYTHON {name}.py", files=((f"{name}.py", program * 64),), ready_name=ready)


def test_no_two_entrants_of_a_folder_share_a_label_whatever_their_bots_announce():
    from arena.tournament.versions import version_labels

    # evil answers ready as greedy does, in both its versions: an export of this folder, read
    # back by arena rate, must keep the four apart (and show evil as evil).
    identities = {"greedy": _claiming("greedy", "a", "greedy 1.0"), "greedy~2": _claiming("greedy~2", "b", "greedy 1.1"),
                  "evil": _claiming("evil", "c", "greedy 1.0"), "evil~2": _claiming("evil~2", "d", "greedy 1.1")}
    labels = version_labels(identities, list(identities))
    assert labels == {"greedy": "greedy@1.0", "greedy~2": "greedy@1.1", "evil": "evil@1.0", "evil~2": "evil@1.1"}
    # Two versions of one bot that announce one version are told apart by their keys.
    identities["greedy~2"] = _claiming("greedy~2", "b", "greedy 1.0")
    labels = version_labels(identities, list(identities))
    assert len(set(labels.values())) == 4
    assert sorted(labels[n] for n in ("greedy", "greedy~2")) == sorted(
        f"greedy@1.0({identities[n].key[:7]})" for n in ("greedy", "greedy~2"))

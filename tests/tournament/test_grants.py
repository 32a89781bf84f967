"""A tournament file's grants (network, writable folders outside a bot's folder, builds):
listed for the run header and ``arena validate``, and the ones that would open the system,
the user's home or the tournament's own files to a bot refused when the file is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.errors import ExitCode
from arena.tournament.config import ConfigError, load_config
from arena.tournament.grants import NETWORK_WARNING, grant_lines

ROOT = Path(__file__).resolve().parents[2]


def _file(tmp_path: Path, bots: str, extra: str = "", folder: str = ".") -> Path:
    (tmp_path / "bot").mkdir(exist_ok=True)
    (tmp_path / "other").mkdir(exist_ok=True)
    where = tmp_path / folder
    where.mkdir(exist_ok=True)
    path = where / "t.yaml"
    path.write_text(f"name: t\nseed: 1\noutput: {tmp_path / 'out'}\n{extra}bots:\n{bots}")
    return path


def _bot(name: str, limits: str = "", more: str = "") -> str:
    return f"  - {{name: {name}, cmd: sh, cwd: {{CWD}}{more}{', limits: ' + limits if limits else ''}}}\n"


def _two(tmp_path: Path, limits: str, extra: str = "", folder: str = ".") -> Path:
    cwd = str(tmp_path / "bot")
    bots = (_bot("a", limits) + _bot("b")).replace("{CWD}", cwd)
    return _file(tmp_path, bots, extra, folder)


@pytest.mark.parametrize("writable, why", [
    ('"/"', "but / is the whole system"),
    ('"~"', "is your home folder"),
    ('"$HOME"', "is your home folder"),
    ('"/usr"', "/usr is a system folder"),
    ('"/etc/arena"', "/etc/arena is a system folder"),
    ('"/dev/shm"', "/dev/shm is a system folder"),
    ('"/var/tmp"', "/var/tmp is shared by every program"),
    ('"/srv"', "/srv is shared by every program"),
    ('"{TMP}"', "holds the tournament's results folder"),
    ('"{TMP}/out/mine"', "is inside the tournament's results folder"),
    ('"{ROOT}"', "holds the arena's own code"),
    ('"{ROOT}/arena/cache"', "is inside the arena's own code"),
    ('"../other/../.."', "holds the tournament's results folder"),
    ('"{TMP}/link"', "but / is the whole system"),
])
def test_a_folder_no_bot_may_write_is_refused_with_one_line(tmp_path, writable, why, monkeypatch):
    # A home apart from the checkout and the test's folders: the runner's may be the checkout
    # itself (a clone made for another user, HOME pointing at it), whose refusal then names the
    # home first, true but not the reason under test.
    monkeypatch.setenv("HOME", "/home/escoba-arena-tester")
    (tmp_path / "link").symlink_to("/")
    value = writable.replace("{TMP}", str(tmp_path)).replace("{ROOT}", str(ROOT))
    value = value.replace("$HOME", os.path.expanduser("~"))
    path = _two(tmp_path, f"{{writable: [bin, {value}]}}")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:5: key 'bots[0].limits.writable[1]': expected a folder of the bot's own"), text
    assert why in text and "\n" not in text
    assert caught.value.exit_code == ExitCode.BAD_INPUT


def test_the_tournament_file_and_its_git_folder_are_protected(tmp_path):
    path = _two(tmp_path, "{writable: [../cfg]}", folder="cfg")
    # the bot's folder is tmp_path/bot, so ../cfg is the file's folder
    path.write_text(path.read_text().replace(f"cwd: {tmp_path / 'bot'}", "cwd: ../bot"))
    with pytest.raises(ConfigError, match=r"holds the tournament file \("):
        load_config(path)
    (tmp_path / "cfg" / ".git").mkdir()
    path.write_text(path.read_text().replace("[../cfg]", "[../cfg/.git/hooks]"))
    with pytest.raises(ConfigError, match=r"is inside the tournament file's git folder \("):
        load_config(path)


def test_a_top_level_grant_is_refused_for_the_bot_it_reaches(tmp_path):
    path = _two(tmp_path, "", extra='limits: {writable: ["~"]}\n')
    with pytest.raises(ConfigError, match=r"key 'limits.writable\[0\]': .*is your home folder \(for bot 'a'\)$"):
        load_config(path)


def test_the_results_folder_of_the_command_line_is_protected_too(tmp_path):
    path = _two(tmp_path, f"{{writable: [{tmp_path / 'elsewhere'}]}}")
    load_config(path)
    with pytest.raises(ConfigError, match=r"elsewhere is the tournament's results folder$"):
        load_config(path, output=str(tmp_path / "elsewhere"))


def test_a_bot_from_a_revision_may_not_write_out_of_its_checkout(tmp_path):
    (tmp_path / "repo").mkdir()
    bots = ("  - {name: a, cmd: sh, source: {repo: repo, rev: main}, limits: {writable: [../..]}}\n"
            "  - {name: b, cmd: sh}\n")
    path = _file(tmp_path, bots)
    with pytest.raises(ConfigError, match=r"key 'bots\[0\].limits.writable\[0\]': expected a folder inside the "
                                          r"repository .* but \.\./\.\. leads out of it"):
        load_config(path)


def test_grants_are_listed_one_line_per_bot(tmp_path):
    cache = tmp_path / "cache" / "a"
    cwd = str(tmp_path / "bot")
    bots = (_bot("a", f"{{network: true, writable: [data, {cache}, ../other]}}", ", build: make -j2") +
            _bot("b", "{network: false}") + _bot("c", "{network: true}")).replace("{CWD}", cwd)
    config = load_config(_file(tmp_path, bots))
    assert grant_lines(config) == [
        f"grants: a: network, writes {cache} (outside its folder), writes {tmp_path / 'other'} (outside its folder), "
        "build: make -j2",
        "grants: c: network",
        f"warning: {NETWORK_WARNING} (a, c)",
    ]


@pytest.mark.parametrize("extra, warned", [
    ("", True),  # duplicate deals by default
    ("duplicate: false\n", False),
    ("duplicate: false\nmode: pairs\n", True),
])
def test_the_network_warning_is_for_duplicate_and_team_events(tmp_path, extra, warned):
    cwd = str(tmp_path / "bot")
    bots = "".join(_bot(name, "{network: true}" if name == "a" else "") for name in "abcd").replace("{CWD}", cwd)
    lines = grant_lines(load_config(_file(tmp_path, bots, extra)))
    assert lines[0] == "grants: a: network"
    assert (lines[-1] == f"warning: {NETWORK_WARNING} (a)") is warned


def test_a_file_without_grants_says_so(tmp_path):
    config = load_config(_two(tmp_path, f"{{writable: [data, ./x/.., {tmp_path / 'bot' / 'y'}]}}"))
    assert grant_lines(config) == ["grants: none"]

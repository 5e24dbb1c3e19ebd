"""prose.toml's one reader: the whole file checked, each problem named by file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.runtime.project_toml import ConfigError, dotted, find_root, key_lines, load

SAMPLE = """\
# comments and blank lines are skipped

[lint]
select = ["wiring_*"]
severity.id_missing = "error"

[[wiring.pin]]
subscriber = "a"
need = "b"
producer = "c"

[[wiring.pin]]   # a second entry
subscriber = "d"
need = '''
a need written
over lines = 3
'''
producer = "f"

[render."mail.feed"]
kind = "ingress"
"""


def test_key_lines_follow_tables_array_entries_and_dotted_keys() -> None:
    lines = key_lines(SAMPLE)
    assert lines["lint"] == 3 and lines["lint.select"] == 4
    assert lines["lint.severity"] == 5 and lines["lint.severity.id_missing"] == 5
    assert lines["wiring.pin"] == 7 and lines["wiring.pin[0]"] == 7
    assert lines["wiring.pin[1]"] == 12 and lines["wiring.pin[1].need"] == 14
    assert "wiring.pin[1].over lines" not in lines  # inside a multi-line string
    assert "over" not in lines
    assert lines["wiring.pin[1].producer"] == 18
    assert lines['render."mail.feed".kind'] == 21


def test_dotted_keys_are_written_as_toml_would() -> None:
    assert dotted(("wiring", "pin", 0, "need")) == "wiring.pin[0].need"
    assert dotted(("render", "mail.feed", "kind")) == 'render."mail.feed".kind'
    assert dotted(()) == ""


def _error(tmp_path: Path, text: str | bytes) -> ConfigError:
    path = tmp_path / "prose.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    return caught.value


def test_every_problem_is_listed_with_file_line_and_key(tmp_path: Path) -> None:
    error = _error(
        tmp_path,
        '[lint]\nignore = ["section_unknown", "nonsense"]\nstrictt = true\n'
        '[lint.severity]\nbogus_code = "error"\nid_missing = "fatal"\n'
        "[run]\njobs = 0\n[surprise]\n[test.judge]\ncommand = []\n",
    )
    path = tmp_path.resolve() / "prose.toml"
    assert str(error).splitlines() == [  # in the order of the file
        f"{path}:2: lint.ignore[1]: expected a diagnostic code, or a `family_*` prefix of "
        "codes, not 'nonsense'",
        f"{path}:3: lint.strictt: unknown key (expected one of ignore, select, severity, strict)",
        f"{path}:5: lint.severity.bogus_code: expected a diagnostic code (see the README's "
        "table), not 'bogus_code'",
        f"{path}:6: lint.severity.id_missing: expected error, warning or info, not 'fatal'",
        f"{path}:8: run.jobs: 0 is less than the minimum of 1",
        f"{path}:9: surprise: unknown key (expected one of build, cadence, deps, lint, render, run, "
        "test, tools, wiring)",
        f"{path}:11: test.judge.command: expected the judge command to run (a template: "
        "{prompt_file} is the prompt's path; without it the prompt comes on stdin), not []",
    ]
    assert error.path == path and [p.line for p in error.problems] == [2, 3, 5, 6, 8, 9, 11]


def test_a_key_inside_an_array_entry_points_at_its_line(tmp_path: Path) -> None:
    error = _error(
        tmp_path,
        '[[wiring.pin]]\nsubscriber = "a"\nneed = "b"\nproducer = "c"\n\n'
        '[[wiring.pin]]\nsubscriber = "a"\nneed = ""\nproducer = "c"\n',
    )
    (problem,) = error.problems
    assert (problem.key, problem.line) == ("wiring.pin[1].need", 8)
    error = _error(tmp_path, '[[wiring.pin]]\nsubscriber = "a"\n')
    assert [(p.key, p.line, p.message) for p in error.problems] == [
        ("wiring.pin[0]", 1, "'need' is a required property"),
        ("wiring.pin[0]", 1, "'producer' is a required property"),
    ]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[lint\n", "invalid TOML"),
        (b"[lint]\nselect = ['\xff']\n", "cannot read"),
        ('[cadence]\ndigest = "P0D"\n', "cadence.digest: cadence 'P0D'"),
        ('[cadence]\ndigest = "cron:0 0 30 2 *"\n', "never fires"),
        ("[run]\ntimeout = inf\n", "run.timeout: inf is not of type 'number'"),
        ("[run]\ntimeout = 0\n", "run.timeout"),
        ('[run]\nbackend = "redis"\n', "run.backend"),
        ('[run]\ndefault_model = "two words"\n', "run.default_model"),
        ('[build]\nsource = ""\n', "build.source"),
        ('[build]\nsource = "nope"\n', "build.source: 'nope' is not a directory of the project"),
        ('[tools]\nskill_paths = "vendor"\n', "tools.skill_paths"),
        ('[render.digest]\nkind = "shell"\n', "render.digest.kind"),
        ('[render.digest]\ncallable = "not a callable"\n', "render.digest.callable"),
    ],
)
def test_bad_files_raise_one_config_error(tmp_path: Path, content: str | bytes, words: str) -> None:
    assert words in str(_error(tmp_path, content))


def test_a_directory_named_prose_toml_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "prose.toml").mkdir()
    with pytest.raises(ConfigError, match="cannot read"):
        load(tmp_path)


def test_a_missing_file_is_none_and_a_byte_order_mark_is_fine(tmp_path: Path) -> None:
    assert load(tmp_path) is None
    (tmp_path / "prose.toml").write_text("\ufeff[lint]\r\nstrict = true\r\n", encoding="utf-8")
    checked = load(tmp_path)
    assert checked is not None and checked.data == {"lint": {"strict": True}}
    assert checked.line_of(("lint", "strict")) == 2


def test_the_root_is_found_from_a_file_below_it(tmp_path: Path) -> None:
    (tmp_path / "prose.lock").write_text("", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.prose.md").write_text("", encoding="utf-8")
    assert find_root(tmp_path / "src" / "a.prose.md") == tmp_path.resolve()


def test_the_deps_table_maps_hosts_to_urls(tmp_path: Path) -> None:
    from prosec.runtime.project_toml import dependency_urls

    (tmp_path / "prose.toml").write_text(
        '[deps]\n"github.com" = "https://mirror.example.com/gh"\n"example.org/acme" = "mirror"\n',
        encoding="utf-8",
    )
    assert dependency_urls(load(tmp_path)) == {
        "github.com": "https://mirror.example.com/gh",
        "example.org/acme": "mirror",
    }
    assert dependency_urls(None) == {}
    for bad in (
        '"acme" = "x"',
        '"github.com" = ""',
        '"github.com/a/b/c" = "x"',
        '"github.com" = "a b"',
    ):
        (tmp_path / "prose.toml").write_text(f"[deps]\n{bad}\n", encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load(tmp_path)
        assert "prose.toml:2: deps" in str(caught.value)

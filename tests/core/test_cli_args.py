"""The CLI's page-command arguments are the engine models' fields (issue 13), generated.

cli/args.py is generated from engine/options.py ahead of time, so a CLI call parses its
arguments without importing pydantic (issue 14); these tests keep it honest.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest

from browserdeck import config
from browserdeck.cli import schema as cli_schema
from browserdeck.engine import options as o


def test_the_generated_cli_arguments_match_the_models() -> None:
    committed = cli_schema.GENERATED.read_text(encoding="utf-8")
    assert committed == cli_schema.render(), (
        "app/browserdeck/cli/args.py is stale: engine/options.py or cli/schema.py changed "
        "since it was generated; run `make cli-args` and commit the result"
    )


def test_the_answers_the_cli_reads_match_the_models() -> None:
    # cli/answers.py gives mypy the keys of every answer the CLI reads (cli/engine.py),
    # generated from results.py: a renamed or dropped field fails the CLI's type check.
    committed = cli_schema.ANSWERS_GENERATED.read_text(encoding="utf-8")
    assert committed == cli_schema.render_answers(), (
        "app/browserdeck/cli/answers.py is stale: results.py or cli/schema.py changed "
        "since it was generated; run `make cli-args` and commit the result"
    )
    assert "class ConsoleEntry(TypedDict):" in committed
    assert "    resourceType: str" in committed  # the wire's names, not Python's


def test_every_argument_takes_its_help_choices_and_type_from_its_field() -> None:
    for command, rows in cli_schema.table().items():
        source = cli_schema.COMMANDS[command][0]
        for row in rows:
            if "field" not in row:
                continue
            schema = cli_schema._fields(source)[row["field"]]
            options = row["options"]
            if "enum" in schema:
                assert options["choices"] == schema["enum"], (command, row)
            if schema.get("type") == "integer":
                assert options["type"] == "int", (command, row)
            if schema.get("description") and options.get("help") != "==SUPPRESS==":
                assert schema["description"] in options["help"], (command, row)
    # create-profile's come from the profile settings' declarations (config.py).
    driver = next(r for r in cli_schema.table()["create-profile"] if r.get("field") == "driver")
    assert driver["options"]["choices"] == list(config.DRIVERS)
    assert driver["options"]["help"] == config.PROFILE_KEYS["driver"].description


def test_a_page_command_parses_without_pydantic() -> None:
    code = (
        "import sys\n"
        "from browserdeck.cli import main as cli\n"
        "try:\n"
        "    cli.main(['click', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'browserdeck')"
        " and (m.startswith('pydantic') or m.startswith('browserdeck.engine')"
        " or m == 'browserdeck.cli.answers')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "longest wait in ms for what it caused" in out  # the model's help
    assert out.strip().splitlines()[-1] == "[]"


def _body(*argv: str) -> dict[str, object]:
    from browserdeck.cli import engine as cli_engine
    from browserdeck.cli import main as cli

    args = cli.build_parser().parse_args(list(argv))
    return cli_engine._body(args, argv[0])


def test_the_cli_spelling_fills_the_model_fields() -> None:
    assert _body("click", "e5", "--double", "--modifiers", "Alt, Shift", "--wait-ms", "0") == {
        "ref": "e5",
        "doubleClick": True,
        "modifiers": ["Alt", "Shift"],
        "waitMs": 0,
    }
    assert _body("wait", "--until-url", "**/done", "--time", "50", "-t", "AB12") == {
        "url": "**/done",
        "timeMs": 50,
        "targetId": "AB12",
    }
    assert _body("evaluate", "() => 1", "--fn", "() => 2") == {"fn": "() => 1"}
    assert _body("evaluate", "--fn", "() => 2") == {"fn": "() => 2"}
    assert _body("navigate", "https://example.org/", "--timeout-ms", "900") == {
        "url": "https://example.org/",
        "timeoutMs": 900,
    }
    # Passed before as a no-op (one shared parent parser): still accepted, still not sent.
    assert _body("screenshot", "--wait-ms", "5", "--full-page") == {"fullPage": True}
    # Every body the CLI builds is one its model accepts.
    o.ClickAct.model_validate({"kind": "click", **_body("click", "e5", "--modifiers", "Meta")})


def test_hidden_arguments_stay_hidden() -> None:
    # argparse hides an argument when its help *is* argparse.SUPPRESS; the generated table
    # holds an equal string, which argparse printed as "==SUPPRESS==".
    from browserdeck.cli import main as cli

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.choices and "click" in a.choices)
    for command in cli_schema.COMMANDS:
        text = sub.choices[command].format_help()  # type: ignore[index]
        assert "SUPPRESS" not in text, command
    assert "--fn" not in sub.choices["evaluate"].format_help()  # type: ignore[index]


def test_help_is_as_wide_as_argparse_makes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI's formatter finds the terminal's width without shutil (issue 14): its help
    # and its errors' usage lines must wrap exactly where argparse's own would.
    from browserdeck.cli import main as cli
    from browserdeck.cli.parser import HelpFormatter

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.choices and "click" in a.choices)
    parsers = [parser, *sub.choices.values()]  # type: ignore[union-attr]
    for columns in ("57", "123", None):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        ours = [p.format_help() for p in parsers]
        for p in parsers:
            p.formatter_class = argparse.HelpFormatter
        assert [p.format_help() for p in parsers] == ours, columns
        for p in parsers:
            p.formatter_class = HelpFormatter


def test_the_query_string_is_the_one_urlencode_builds() -> None:
    # The client builds it itself so that a call over the socket needs no urllib.parse.
    from urllib.parse import urlencode

    from browserdeck.client import query_string

    for params in (
        {"profile": "work", "targetId": "0C12A3FA"},
        {"q": "a b&c=d?e/f+g%h~i._-", "unicode": "é中\U0001f600", "empty": ""},
        {"interactive": True, "maxChars": 2000, "ratio": 0.5},
    ):
        assert query_string(params) == urlencode(params)


def _argvs(parser: argparse.ArgumentParser) -> list[list[str]]:
    """Argument lists for one subcommand: plain ones, and ones only argparse reads."""
    positional = [f"v{i}" for i, a in enumerate(parser._actions) if not a.option_strings]
    options: list[list[str]] = []
    for action in parser._actions:
        if not action.option_strings:
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            options.append([flag])
        elif action.choices:
            options.append([flag, str(next(iter(action.choices)))])
        else:
            options.append([flag, "7" if action.type is int else "val"])
    every = [token for option in options for token in option]
    argvs = [[], positional, [*positional, "extra"], [*every, *positional], [*positional, *every]]
    for option in options:
        argvs += [[*positional, *option], [*option, *positional], [*option, *option, *positional]]
        argvs.append([*positional[:1], *option, *positional[1:]])  # split positionals
        if len(option) == 2:
            argvs += [[*positional, option[0]], [*positional, f"{option[0]}={option[1]}"],
                      [*positional, option[0], "-x"], [*positional, option[0][:4], option[1]]]
    argvs += [[*positional, "-h"], [*positional, "--"], ["-", *positional], [*positional, "-5"]]
    return argvs


def test_a_plain_call_is_read_as_argparse_reads_it() -> None:
    # cli_fast reads a plain call without argparse (issue 14), from the same declarations:
    # every answer it gives must be argparse's, for every command; the rest it leaves.
    from browserdeck.cli import fast as cli_fast
    from browserdeck.cli import main as cli

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.choices and "click" in a.choices)
    read = left = 0
    for command, subparser in sub.choices.items():  # type: ignore[union-attr]
        declared = cli.recorded(command)
        assert declared is not None, command
        for argv in _argvs(subparser):
            fast = cli_fast.parse(declared, command, argv)
            if fast is None:
                left += 1
                continue
            read += 1
            assert vars(fast) == vars(parser.parse_args([command, *argv])), (command, argv)
    assert read > 300 and left > 300, (read, left)
    for argv in (["tabs"], ["snapshot"], ["click", "e5"], ["snapshot", "-t", "AB", "--json"],
                 ["type", "e5", "hi there", "--submit"], ["click", "--double", "e5"],
                 # How `browserdeck mcp` starts the service, and its value given (issue 14).
                 ["serve", "--headless", "--idle-exit", "--ready-fd", "5"],
                 ["serve", "--idle-exit", "30", "--port", "18791"]):
        fast = cli_fast.parse(cli.recorded(argv[0]), argv[0], argv[1:])  # type: ignore[arg-type]
        assert fast is not None, argv
        assert vars(fast) == vars(parser.parse_args(argv)), argv


def test_a_str_const_is_converted_and_checked_as_argparse_does() -> None:
    # argparse runs an optional value's str const through its type and choices (`--n`
    # gives 5, not "5"; `--c` is an error), and leaves any other const as it is: cli_fast
    # returned the raw str. No command declares such a const yet; this keeps it so.
    from browserdeck.cli import fast as cli_fast

    def declare(parser: Any) -> Any:
        parser.add_argument("--n", type=int, nargs="?", const="5")
        parser.add_argument("--c", nargs="?", const="zz", choices=["a", "b"])
        parser.add_argument("--f", type=float, nargs="?", const=-1.0)
        return parser

    recorded = declare(cli_fast.Recorder())
    parser = declare(argparse.ArgumentParser(exit_on_error=False))
    for argv in (["--n"], ["--c"], ["--f"], ["--f", "2"], ["--n", "3"], ["--c", "a"]):
        fast = cli_fast.parse(recorded, "x", argv)
        if fast is None:
            continue
        try:
            expected = vars(parser.parse_args(argv))
        except argparse.ArgumentError:
            raise AssertionError(f"{argv}: argparse refuses it, cli_fast read {vars(fast)}") from None
        assert vars(fast) == {"command": "x", **expected}, argv
    single = cli_fast.Recorder()
    single.add_argument("--f", type=float, nargs="?", const=-1.0)
    assert vars(cli_fast.parse(single, "x", ["--f"])) == {"command": "x", "f": -1.0}


def test_fastjson_reads_and_writes_what_json_does() -> None:
    # The client's JSON without the json package (issue 14): the same values both ways.
    import json
    import math

    from browserdeck.util import fastjson

    values = [
        {"ok": True, "tabs": [{"targetId": "AB", "title": "é \u2028 \"q\" \\ \n", "n": None}]},
        {"floats": [0.1, -2.5e-300, 1e300, 3.0, -0.0], "ints": [0, -7, 10**30], "nested": {}},
        [], "plain", 42, {"emoji": "\U0001f600", "ctl": "\x00\x1f"}, [[[]], {"k": [{}]}],
    ]
    for value in values:
        text = json.dumps(value)
        assert fastjson.dumps(value) == text
        for indent, ascii_only in ((2, True), (2, False), (None, False), (4, True)):
            assert fastjson.dumps(value, indent=indent, ensure_ascii=ascii_only) == json.dumps(
                value, indent=indent, ensure_ascii=ascii_only
            ), (value, indent, ascii_only)
        assert fastjson.loads(text) == json.loads(text)
        assert fastjson.loads(text.encode()) == json.loads(text)
    assert math.isnan(fastjson.loads('{"x": NaN}')["x"])
    assert fastjson.dumps({1: float("inf")}) == json.dumps({1: float("inf")})  # json's way
    assert fastjson.loads(' \n{"a": 1}') == {"a": 1}
    for bad in ('{"a": 1} x', "{", "", '{"a": 1,}'):
        with pytest.raises(ValueError):
            fastjson.loads(bad)

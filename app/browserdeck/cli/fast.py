"""A CLI call's arguments read without argparse.

argparse and json both import ``re`` and ``enum``: with them, a call over the API socket
took ~37 ms here against ~20 ms without (``python -c pass`` took 20; util/fastjson.py is the
json half). So a call whose
arguments are plain (its command first, then exact option names and values, its
positionals in one run) is read here, from the same declarations: ``cli.build_parser``
runs with ``Recorder`` in place of argparse's parser and records that one subcommand.
Anything else (``--help``, an error, an abbreviated option, ``--opt=value``, a value
starting with ``-``, optional or repeated positionals, a mutually exclusive group) is
left to argparse, which says what it always says. ``tests/core/test_cli_args.py`` holds
every answer given here equal to argparse's over every command.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# argparse.SUPPRESS's value; cli.parser.Parser gives argparse its own object for it.
SUPPRESS = "==SUPPRESS=="


class Skipped:
    """Stands for a subcommand's parser that this call does not build: takes any call."""

    def __getattr__(self, name: str) -> Any:
        return self._ignore

    def _ignore(self, *args: Any, **kwargs: Any) -> Skipped:
        return self


class Recorder:
    """Takes the calls ``build_parser`` makes on argparse's parser and keeps them."""

    def __init__(self, *args: Any, parents: Any = (), **kwargs: Any) -> None:
        self.arguments: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.defaults: dict[str, Any] = {}
        self.plain = True  # False: something only argparse reads (a group)
        self.parsers: dict[str, Recorder] = {}
        for parent in parents:
            self.arguments += parent.arguments
            self.defaults.update(parent.defaults)

    def add_argument(self, *flags: str, **options: Any) -> None:
        self.arguments.append((flags, options))

    def set_defaults(self, **values: Any) -> None:
        self.defaults.update(values)

    def add_mutually_exclusive_group(self, **kwargs: Any) -> Recorder:
        self.plain = False
        return self

    def add_subparsers(self, **kwargs: Any) -> Recorder:
        return self

    def add_parser(self, name: str, **kwargs: Any) -> Recorder:
        parser = Recorder(parents=kwargs.get("parents", ()))
        self.parsers[name] = parser
        return parser


class Namespace:
    """What argparse.parse_args returns: the arguments as attributes."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


# The argparse options of an argument cli.fast reads as argparse would; any other leaves
# the whole call to argparse.
_PLAIN = frozenset(
    {"action", "choices", "const", "default", "dest", "help", "metavar", "nargs", "type"}
)


def parse(recorded: Recorder, command: str, argv: list[str]) -> Any:
    """``argv`` (after the command) as argparse would read it, or None to let it read it."""
    if not recorded.plain:
        return None
    options: dict[str, tuple[str, dict[str, Any]]] = {}
    positionals: list[tuple[str, dict[str, Any]]] = []
    values: dict[str, Any] = {"command": command}
    for flags, opts in recorded.arguments:
        if not opts.keys() <= _PLAIN:
            return None  # required, nargs, const, ...: argparse's own business
        if not flags[0].startswith("-"):
            if opts.keys() & {"type", "choices", "dest", "nargs", "const"}:
                return None
            dest = opts.get("dest", flags[0])
            positionals.append((dest, opts))
            values[dest] = opts.get("default")
            continue
        action = opts.get("action", "store")
        if action not in ("store", "store_true"):
            return None
        # An optional value (`serve --idle-exit [SECONDS]`: how `browserdeck mcp` starts
        # the service, whose start the MCP client waits for) is read only with its const.
        if opts.get("nargs", "?") != "?" or ("nargs" in opts) != ("const" in opts):
            return None
        if isinstance(opts.get("default"), str) and "type" in opts:
            return None  # argparse would convert the default too
        if isinstance(opts.get("const"), str) and opts.keys() & {"type", "choices"}:
            return None  # and a str const: converted, then checked against the choices
        long = next((f for f in flags if f.startswith("--")), flags[0])
        dest = opts.get("dest", long.lstrip("-").replace("-", "_"))
        values[dest] = opts.get("default", False if action == "store_true" else None)
        for flag in flags:
            options[flag] = (dest, opts)
    if positionals and any("nargs" in opts for _, opts in options.values()):
        return None  # which token an optional value takes beside positionals: argparse's
    values.update(recorded.defaults)
    given: set[str] = set()
    taken: list[str] = []
    run_ended = False  # the positionals' run is over once an option follows it
    i = 0
    while i < len(argv):
        token = argv[i]
        if token.startswith("-"):
            if token not in options:
                return None  # -h, --opt=value, an abbreviation, a negative number, --
            dest, opts = options[token]
            if dest in given:
                return None
            given.add(dest)
            if opts.get("action") == "store_true":
                values[dest] = True
            elif "nargs" in opts and (i + 1 == len(argv) or argv[i + 1] in options):
                values[dest] = opts["const"]  # no value given: the option's const
            else:
                i += 1
                if i == len(argv) or argv[i].startswith("-"):
                    return None  # -5 may be a value to argparse: its call
                value: Any = argv[i]
                if "type" in opts:
                    try:
                        value = opts["type"](value)
                    except Exception:  # argparse says what is wrong with it
                        return None
                if "choices" in opts and value not in opts["choices"]:
                    return None
                values[dest] = value
            run_ended = bool(taken)
        else:
            if run_ended:
                return None
            taken.append(token)
        i += 1
    if len(taken) != len(positionals):
        return None
    for (dest, _), token in zip(positionals, taken, strict=True):
        values[dest] = token
    return Namespace(**values)

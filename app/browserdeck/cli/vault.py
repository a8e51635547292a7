"""The user's commands for logins: secrets and saved auth states.

    browserdeck secret set bank --origin https://bank.example   # the value: prompt or stdin
    browserdeck secret set bank --origin https://bank.example --totp   # and a code seed
    browserdeck secret list
    browserdeck secret rm bank
    browserdeck state save bank-login
    browserdeck state load bank-login --profile work
    browserdeck state list
    browserdeck state rm bank-login

``secret`` writes the vault itself, in this process, as the user (secrets/vault.py): no route of
the service sets or reads a value, and a value is never an argument (every local user
can read argv). ``state`` is a client of the API; loading into the user's own Chrome
asks at this terminal when the service has no one else to ask.
"""

from __future__ import annotations

import sys

from browserdeck.cli.fast import Skipped
from browserdeck.client import ApiClient, ClientError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from browserdeck.cli import answers as answer


def _read_value(prompt: str, lines: list[str] | None) -> str:
    """A value typed without echo, or the next line piped in (its newline is not part of it)."""
    if lines is None:
        import getpass

        return getpass.getpass(prompt)
    return lines.pop(0) if lines else ""


def cmd_secret(args: argparse.Namespace) -> int:
    from browserdeck.errors import InvalidInput
    from browserdeck.secrets import vault

    v = vault.shared()
    if args.action == "list":
        found = v.entries()
        if args.json:
            from browserdeck.util import fastjson

            print(fastjson.dumps([{"name": s.name, "origins": list(s.origins), "value": s.value,
                                   "totp": s.totp, "stored": s.where} for s in found], indent=2))
        for s in found if not args.json else []:
            kept = "OS keyring" if s.where == "keyring" else "0600 file"
            code = ", one-time code" if s.totp else ""
            print(f"{s.name}  {' '.join(s.origins)}  ({kept}{code})")
        if not found and not args.json:
            print("(no secrets; add one with: browserdeck secret set NAME --origin URL)")
        return 0
    if not args.name:
        raise InvalidInput(f"secret {args.action} needs a NAME", hint="e.g. browserdeck secret "
                           f"{args.action} bank" + (" --origin https://bank.example"
                                                    if args.action == "set" else ""))
    if args.action == "rm":
        if not v.remove(vault.check_name(args.name)):
            raise InvalidInput(f"there is no secret named {args.name!r}",
                               hint="`browserdeck secret list` shows them")
        print(f"removed {args.name}", file=sys.stderr)
        return 0
    known = {s.name: s for s in v.entries()}
    origins = args.origin or (list(known[args.name].origins) if args.name in known else [])
    if not origins:
        raise InvalidInput(f"secret {args.name!r} needs at least one origin it may be used on",
                           hint="add --origin https://site.example (repeat for more)")
    for origin in origins:  # refused before anything is asked
        vault.normalize_origin(origin)
    # Piped: the value is the first line, a seed (--totp) the second; at a terminal, prompts.
    lines = None if sys.stdin.isatty() else sys.stdin.read().split("\n")
    if lines is not None and lines[-1:] == [""]:
        lines.pop()  # the newline that ends the input
    value = None if args.keep_value else _read_value(f"value of {args.name}: ", lines)
    seed = _read_value("one-time code seed (base32 or otpauth://...): ", lines) if args.totp else None
    saved = v.set(args.name, origins, value.rstrip("\r") if value else value, totp_seed=seed,
                  drop_totp=args.no_totp)
    where = "the OS keyring" if saved.where == "keyring" else f"a 0600 file ({v.path})"
    code = " and its one-time code seed" if saved.totp else ""
    print(f"stored {saved.name}{code} in {where}; usable on {', '.join(saved.origins)}",
          file=sys.stderr)
    return 0


def _state_line(s: answer.AuthState) -> str:
    parts = [f"{s['cookies']} cookies"]
    if s["origins"]:
        parts.append("site storage of " + ", ".join(s["origins"]))
    return "; ".join(parts)


def cmd_state(args: argparse.Namespace, client: ApiClient) -> int:
    from urllib.parse import quote

    params: dict[str, Any] = {"profile": getattr(args, "profile", None)}
    if args.action == "list":
        listed: answer.AuthStates = client.get("/states")
        lines = [f"{s['name']}  (from {s['profile']}): {_state_line(s)}" for s in listed["states"]]
        client.print_result(listed, args, "\n".join(lines) or "(no saved auth states)")
        return 0
    if not args.name:
        raise ClientError(f"state {args.action} needs a NAME", f"e.g. browserdeck state {args.action} mysite")
    if args.action == "rm":
        gone = client.delete(f"/states/{quote(args.name, safe='')}")
        client.print_result(gone, args, f"deleted {gone['deleted']}")
        return 0
    if args.action == "save":
        saved: answer.AuthState = client.post("/states/save", json={"name": args.name}, params=params)
        lines = [f"saved {saved['name']} from {saved['profile']}: {_state_line(saved)}"]
        client.print_result(saved, args, "\n".join(lines + [f"not saved: {p}" for p in saved["problems"]]))
        return 0
    try:
        loaded: answer.AuthStateLoaded = client.post("/states/load", json={"name": args.name},
                                                     params=params)
    except ClientError as err:
        if err.code != "needs_user_consent" or not sys.stdin.isatty():
            raise
        # The service had no one to ask: the person at this terminal is the user.
        print(f"{err.message}", file=sys.stderr)
        if input("Load them into your own Chrome? [y/N] ").strip().lower() not in ("y", "yes"):
            raise ClientError("not loaded: you said no") from None
        loaded = client.post("/states/load", json={"name": args.name}, params=params,
                             headers={"X-Browserdeck-Confirmed": "state-load"})
    lines = [f"loaded {loaded['name']} into {loaded['loadedInto']}: {_state_line(loaded)}"]
    client.print_result(loaded, args, "\n".join(lines + [f"not done: {p}" for p in loaded["problems"]]))
    return 0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser("secret", parents=[common], help="store a secret agents use by name "
                       "(the value: prompt or stdin), list or remove them")
    p.add_argument("action", choices=["set", "list", "rm"])
    p.add_argument("name", nargs="?", help="the secret's name (letters, digits, '_', '.', '-')")
    p.add_argument("--origin", action="append", metavar="URL",
                   help="an origin it may be typed into, e.g. https://bank.example or "
                   "https://*.bank.example (repeat for more; default when changing: kept)")
    p.add_argument("--totp", action="store_true",
                   help="also read a one-time code seed (base32, or the otpauth:// address)")
    p.add_argument("--no-totp", action="store_true", help="remove its one-time code seed")
    p.add_argument("--keep-value", action="store_true",
                   help="change only origins or the seed; the value stays")
    p.set_defaults(local=cmd_secret)

    p = sub.add_parser("state", parents=[common], help="save, load, list or delete a "
                       "profile's logins (cookies and site storage)")
    p.set_defaults(func=cmd_state)
    if isinstance(p, Skipped):
        return  # not built: another command runs (cli.build_parser)
    from browserdeck.cli.engine import add_arguments

    add_arguments(p, "state")  # as door/logins.py declares them (cli/args.py)

"""`daedalus plan`: Labyrinth plans from the command line.

    daedalus plan show FILE [--svg OUT.svg] [--json OUT.json]
    daedalus plan check FILE [--players N] [--option KEY=VALUE ...] [--json]
    daedalus plan generate [--seed S] [--size WxH] [--players N] [--option KEY=VALUE ...]
                           [--no-corners] [--no-repeat] [--common-start] [--out FILE] [--svg OUT.svg]

`show` reads a plan (the text format of docs/rules/labyrinth.md, or its JSON form when the
file starts with `{`), prints its ASCII picture, and writes the SVG picture and the JSON
form when asked. A plan that cannot be read is reported as `FILE:LINE:COLUMN: message`
with exit status 1.

`check` validates a plan (domain/games/labyrinth/validate.py): one line per error and
warning, each naming its rule and cell, then a summary; exit status 1 when there is an
error. `--option KEY=VALUE` sets the match's limits on its plan (option 7.1), `--players`
the number of players (for 8.R3 and 5.7).

`generate` draws a plan (domain/games/labyrinth/generate.py) from `Rng(SEED, "setup")`,
the generator a match's setup gets from the engine, SEED being the bytes of 64 hex digits
(a match's seed) or else the UTF-8 of the text; same seed and options, same plan. The
plan's name records the seed and options.

clients/cli.py calls `add_plan_parser` to register the `plan` command and `cmd_plan` to run
it. Each subcommand is one `_add_NAME` function (its arguments, with `handler` set to its
`cmd_NAME`) called from `add_plan_parser`, and its `cmd_NAME(args) -> int`.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path
from typing import Any

from domain.games.labyrinth.pictures import ascii_picture, svg_picture
from domain.games.labyrinth.plan import Plan, PlanError
from domain.games.labyrinth.plan_text import parse_plan, plan_from_json, plan_to_json


def add_plan_parser(sub: Any) -> None:
    """Register `daedalus plan` and its subcommands on the CLI's subparsers."""
    plan = sub.add_parser(
        "plan", help="Labyrinth plans: show, check and generate them (docs/rules/labyrinth.md)",
        description="Labyrinth plans: the text format and the pictures are in docs/rules/labyrinth.md.",
    )
    commands = plan.add_subparsers(
        dest="plan_command", required=True, metavar="PLAN_COMMAND", help="what to do with a plan"
    )
    _add_show(commands)
    _add_check(commands)
    _add_generate(commands)


def cmd_plan(args: argparse.Namespace) -> int:
    handler = args.handler
    code: int = handler(args)
    return code


# --- shared ----------------------------------------------------------------------------


def _err(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def read_plan(path: str, command: str) -> Plan | None:
    """The plan in a file (text format, or JSON when it starts with `{`; `-` is standard
    input); None after printing why it cannot be read, as `FILE:LINE:COLUMN: message`."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _err(f"daedalus plan {command}: cannot read {path}: {exc}")
        return None
    try:
        return plan_from_json(text) if text.lstrip().startswith("{") else parse_plan(text)
    except PlanError as exc:
        _err(f"{path}:{plan_error_place(exc)} {exc.message if exc.rule is None else f'{exc.rule}: {exc.message}'}")
        return None


def plan_error_place(exc: PlanError) -> str:
    """`LINE:COLUMN:` (or `LINE:`, or nothing) for an error's place in a file."""
    if exc.line is None:
        return ""
    return f"{exc.line}:" + (f"{exc.column}:" if exc.column is not None else "")


def write_text(path: str, text: str, command: str) -> bool:
    """Write a file (`-` is standard output); False after printing why it failed."""
    if path == "-":
        sys.stdout.write(text)
        return True
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        _err(f"daedalus plan {command}: cannot write {path}: {exc}")
        return False
    return True


# --- show ------------------------------------------------------------------------------


def _add_show(commands: Any) -> None:
    show = commands.add_parser(
        "show", help="print a plan's picture (and write its SVG or JSON)",
        description="Print the ASCII picture of a plan file (text format, or JSON); optionally "
        "write its SVG picture and its JSON form.",
    )
    show.add_argument(
        "file", metavar="FILE", help="a plan file: the text format, or the JSON form ('-' for standard input)"
    )
    show.add_argument(
        "--svg", default=None, metavar="OUT.svg",
        help="also write the SVG picture to this file ('-' for standard output; default: none)",
    )
    show.add_argument(
        "--json", default=None, metavar="OUT.json",
        help="also write the plan's JSON form to this file ('-' for standard output; default: none)",
    )
    show.set_defaults(handler=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    plan = read_plan(args.file, "show")
    if plan is None:
        return 1
    if "-" not in (args.svg, args.json):
        sys.stdout.write(ascii_picture(plan))
    ok = True
    if args.svg is not None:
        ok = write_text(args.svg, svg_picture(plan), "show") and ok
    if args.json is not None:
        ok = write_text(args.json, plan_to_json(plan) + "\n", "show") and ok
    return 0 if ok else 1


# --- check -----------------------------------------------------------------------------


def _plan_option(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` for one of the plan options of a match (domain/games/labyrinth/validate.py)."""
    from domain.contract import OptionsError
    from domain.games.labyrinth.validate import PLAN_OPTIONS

    key, sep, raw = text.partition("=")
    known = {o.name: o for o in PLAN_OPTIONS}
    if not sep or key not in known:
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE with KEY one of {', '.join(known)}; got {text!r}"
        )
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    option = known[key]
    if value is None and option.nullable:
        return key, None
    try:
        return key, option.check(value, "")
    except OptionsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _options_help() -> str:
    from domain.games.labyrinth.validate import PLAN_OPTIONS

    return "; ".join(
        f"{o.name} (default {json.dumps(o.default)}): {o.description}" for o in PLAN_OPTIONS
    )


def _add_limits(parser: Any) -> None:
    parser.add_argument(
        "--players", type=int, default=None, metavar="N",
        help="the number of players the plan is for (checks 1 to N fake treasures and, with "
        "landmines, more exits than players)",
    )
    parser.add_argument(
        "--option", action="append", default=[], type=_plan_option, metavar="KEY=VALUE",
        help="a match's limit on its plan (repeatable; null is no limit): " + _options_help(),
    )


def _limits(args: argparse.Namespace) -> Any:
    from domain.games.labyrinth.validate import PlanOptions

    return PlanOptions(**dict(args.option))


def _add_check(commands: Any) -> None:
    check = commands.add_parser(
        "check", help="check a plan against the rules of section 8 (exit 1 on an error)",
        description="Check a plan file against section 8 of the rule book and the match's limits "
        "(option 7.1): each error and warning names its rule and cell. Exit status 1 when there "
        "is an error; warnings (recommendations not followed) leave it 0.",
    )
    check.add_argument("file", metavar="FILE", help="a plan file: the text format, or the JSON form")
    _add_limits(check)
    check.add_argument("--json", action="store_true",
                       help="print the findings as JSON (rule, cell, name, message, warning)")
    check.set_defaults(handler=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    from domain.games.labyrinth.validate import validate

    plan = read_plan(args.file, "check")
    if plan is None:
        return 1
    report = validate(plan, _limits(args), args.players)
    if args.json:
        print(json.dumps({"ok": report.ok, "errors": [p.to_dict() for p in report.errors],
                          "warnings": [p.to_dict() for p in report.warnings]}, indent=2))
        return 0 if report.ok else 1
    for problem in report.problems:
        print(f"{args.file}: {problem.text}")
    counts = f"{_count(len(report.errors), 'error')}, {_count(len(report.warnings), 'warning')}"
    if report.ok:
        print(f"{args.file}: the plan keeps the rules ({counts})")
        return 0
    print(f"{args.file}: refused ({counts})")
    return 1


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- generate --------------------------------------------------------------------------


def _size(text: str) -> tuple[int, int]:
    """`WxH`: columns by rows."""
    width, sep, height = text.lower().partition("x")
    try:
        columns, rows = int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WxH, such as 5x4 (columns x rows); got {text!r}") from None
    if not sep:
        raise argparse.ArgumentTypeError(f"expected WxH, such as 5x4 (columns x rows); got {text!r}")
    return columns, rows


def seed_bytes(seed: str) -> bytes:
    """A seed as the generator's bytes: 64 hex digits are a match's seed (as a replay shows
    it), anything else its UTF-8 text."""
    if len(seed) == 64:
        try:
            return bytes.fromhex(seed)
        except ValueError:
            pass
    return seed.encode()


def _add_generate(commands: Any) -> None:
    gen = commands.add_parser(
        "generate", help="draw a plan from a seed (section 8's rules and recommendations)",
        description="Draw a plan from a seed: the same seed and options give the same plan. The "
        "plan's text goes to --out (default: standard output), its picture to --svg.",
    )
    gen.add_argument("--seed", default=None, metavar="S",
                     help="the seed (64 hex digits: a match's seed; default: a random one, printed)")
    gen.add_argument("--size", type=_size, default=(5, 5), metavar="WxH",
                     help="columns x rows, each 3 to 30 (default: 5x5)")
    _add_limits(gen)
    gen.add_argument("--no-corners", action="store_true",
                     help="leave the four corner cells out of the plan (default: a full rectangle)")
    gen.add_argument("--no-repeat", action="store_true",
                     help="no repeating layout (default: features in pairs a half-turn apart, 8.R5)")
    gen.add_argument("--common-start", action="store_true",
                     help="name a cell every player starts from (option 7.6; default: none)")
    gen.add_argument("--out", default=None, metavar="FILE",
                     help="write the plan's text here (default: standard output)")
    gen.add_argument("--svg", default=None, metavar="OUT.svg", help="write the plan's SVG picture here")
    gen.set_defaults(handler=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    import msgspec

    from domain.games.labyrinth.generate import GenerateOptions, GenerationError, generate
    from domain.games.labyrinth.plan_text import render_plan
    from domain.rng import Rng

    if args.seed is None:
        args.seed = str(secrets.randbelow(10**9))
        _err(f"daedalus plan generate: --seed {args.seed}")
    columns, rows = args.size
    players = 2 if args.players is None else args.players
    options = GenerateOptions(
        rows=rows, columns=columns, players=players, limits=_limits(args),
        corners=not args.no_corners, repeat=not args.no_repeat, common_start=args.common_start,
    )
    try:
        plan = generate(options, Rng(seed_bytes(args.seed), "setup"))
    except GenerationError as exc:
        _err(f"daedalus plan generate: {exc}")
        return 1
    words = [f"seed {args.seed}", f"{columns}x{rows}", f"{players} players"]
    words += [f"{k}={json.dumps(v)}" for k, v in args.option]
    words += [w for flag, w in ((args.no_corners, "no corners"), (args.no_repeat, "no repeat"),
                                (args.common_start, "common start")) if flag]
    plan = msgspec.structs.replace(plan, name="generated: " + ", ".join(words))
    text = render_plan(plan)
    if args.out is None:
        sys.stdout.write(text)
    else:
        if not write_text(args.out, text, "generate"):
            return 1
        sys.stdout.write(ascii_picture(plan))
    if args.svg is not None and not write_text(args.svg, svg_picture(plan), "generate"):
        return 1
    return 0

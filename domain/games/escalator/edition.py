"""Escalator command editions: 36 commands as data, and the loader that checks them.

The rule text's command list is lost, so a command edition is a file: TOML (or the same
structure as JSON) with

    edition = "daedalus"            # a short name
    title = "Daedalus edition 1"
    colours = ["red", "blue", "green"]
    [[command]]
    name = "Shove"                  # unique, 1 to 24 characters
    colour = "red"                  # one of `colours`
    target = ["down 2"]             # the target program: a list of effects
    user = []                       # the user program

with exactly 12 commands of each of the three colours. The effect vocabulary:

    up N, down N      move N levels (1..9); up stops at the player's lock
    swap              the two players exchange their start-of-phase levels
    shield            no descent for this player in this Execute
    redirect          the down moves other commands put on this player this Execute
                      land on the other player of the command instead
    points N          N hidden points (-9..9, not 0; a total never goes below 0)
    learn_points      this player privately learns the other player's point total
    unmask            (target program only) the target learns who used the command

A command holds at least one effect, and at most one `swap` (in either program).
`parse_edition(text)` is pure: it takes the text and returns an `Edition`, or raises
`EditionError` naming the command and the field of the first problem. The shipped
editions are read once, at import, from this package's `commands/` directory.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

import msgspec

COMMANDS_PER_COLOUR = 12
COLOURS = 3
MAX_NAME = 24
MAX_AMOUNT = 9
MAX_TEXT = 64_000

MOVES = ("up", "down")
PLAIN = ("swap", "shield", "redirect", "learn_points", "unmask")
KINDS = (*MOVES, "points", *PLAIN)


class EditionError(ValueError):
    """A command file that does not parse or validate; the message names the command and
    the field."""


class Effect(msgspec.Struct, frozen=True):
    kind: str  # up | down | points | swap | shield | redirect | learn_points | unmask
    amount: int = 0

    def text(self) -> str:
        if self.kind in MOVES:
            return f"{self.kind} {self.amount}"
        if self.kind == "points":
            return f"points {self.amount:+d}"
        return self.kind


class Command(msgspec.Struct, frozen=True):
    name: str
    colour: str
    target: tuple[Effect, ...]
    user: tuple[Effect, ...]

    def has(self, kind: str, program: str | None = None) -> bool:
        progs = (self.target, self.user) if program is None else (getattr(self, program),)
        return any(e.kind == kind for prog in progs for e in prog)


class Edition(msgspec.Struct, frozen=True):
    name: str
    title: str
    colours: tuple[str, ...]
    commands: tuple[Command, ...]

    def find(self, name: str) -> Command | None:
        for c in self.commands:
            if c.name == name:
                return c
        folded = name.casefold()
        for c in self.commands:
            if c.name.casefold() == folded:
                return c
        return None

    def colour_of(self, name: str) -> str:
        found = self.find(name)
        if found is None:
            raise KeyError(name)
        return found.colour


def _effect(text: Any, where: str, program: str) -> Effect:
    if not isinstance(text, str):
        raise EditionError(f"{where} field {program!r}: an effect is a string, not {text!r}")
    words = text.split()
    if not words or words[0] not in KINDS:
        raise EditionError(
            f"{where} field {program!r}: unknown effect {text!r} (known: {', '.join(KINDS)})"
        )
    kind = words[0]
    if kind in PLAIN:
        if len(words) != 1:
            raise EditionError(f"{where} field {program!r}: {kind!r} takes no number ({text!r})")
        if kind == "unmask" and program != "target":
            raise EditionError(f"{where} field {program!r}: 'unmask' belongs in a target program")
        return Effect(kind)
    if len(words) != 2:
        raise EditionError(f"{where} field {program!r}: {kind!r} takes one number ({text!r})")
    try:
        amount = int(words[1])
    except ValueError:
        raise EditionError(f"{where} field {program!r}: {words[1]!r} is not a number") from None
    if kind in MOVES and not 1 <= amount <= MAX_AMOUNT:
        raise EditionError(f"{where} field {program!r}: {kind} takes 1 to {MAX_AMOUNT} ({text!r})")
    if kind == "points" and (amount == 0 or abs(amount) > MAX_AMOUNT):
        raise EditionError(
            f"{where} field {program!r}: points take -{MAX_AMOUNT} to {MAX_AMOUNT}, not 0 ({text!r})"
        )
    return Effect(kind, amount)


def _program(value: Any, where: str, program: str) -> tuple[Effect, ...]:
    if value is None:
        raise EditionError(f"{where} field {program!r} is missing (use [] for no effect)")
    if not isinstance(value, list):
        raise EditionError(f"{where} field {program!r}: a program is a list of effects")
    return tuple(_effect(v, where, program) for v in value)


def _command(raw: Any, index: int, colours: tuple[str, ...]) -> Command:
    if not isinstance(raw, Mapping):
        raise EditionError(f"command {index + 1}: a command is a table")
    name = raw.get("name")
    where = f"command {index + 1}"
    if not isinstance(name, str) or not name.strip():
        raise EditionError(f"{where} field 'name': a command needs a name")
    name = name.strip()
    if len(name) > MAX_NAME or not name.isprintable():
        raise EditionError(f"{where} field 'name': {name!r} is not 1 to {MAX_NAME} printable characters")
    where = f"command {name!r}"
    unknown = sorted(set(raw) - {"name", "colour", "target", "user"})
    if unknown:
        raise EditionError(f"{where} field {unknown[0]!r}: unknown field")
    colour = raw.get("colour")
    if colour not in colours:
        raise EditionError(f"{where} field 'colour': {colour!r} is not one of {', '.join(colours)}")
    target = _program(raw.get("target"), where, "target")
    user = _program(raw.get("user"), where, "user")
    if not target and not user:
        raise EditionError(f"{where} field 'target': a command needs at least one effect")
    for program, effects in (("target", target), ("user", user)):
        kinds = [e.kind for e in effects]
        for kind in set(kinds):
            if kinds.count(kind) > 1:
                raise EditionError(f"{where} field {program!r}: {kind!r} is given twice")
    swaps = sum(1 for e in (*target, *user) if e.kind == "swap")
    if swaps > 1:
        raise EditionError(f"{where} field 'user': one swap per command (the target program has one)")
    return Command(name=name, colour=str(colour), target=target, user=user)


def _load(text: str) -> Any:
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise EditionError(f"edition: not valid JSON ({exc})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EditionError(f"edition: not valid TOML ({exc})") from None


def parse_edition(text: str) -> Edition:
    """A command edition from its text (TOML, or JSON of the same shape)."""
    if not isinstance(text, str):
        raise EditionError("edition: a command edition is a text")
    if len(text) > MAX_TEXT:
        raise EditionError(f"edition: at most {MAX_TEXT} characters")
    raw = _load(text)
    if not isinstance(raw, Mapping):
        raise EditionError("edition: the file is a table of fields")
    unknown = sorted(set(raw) - {"edition", "title", "colours", "command"})
    if unknown:
        raise EditionError(f"edition field {unknown[0]!r}: unknown field")
    name, title = raw.get("edition"), raw.get("title", "")
    if not isinstance(name, str) or not name.strip():
        raise EditionError("edition field 'edition': a name is needed")
    if not isinstance(title, str):
        raise EditionError("edition field 'title': a text")
    colours = raw.get("colours")
    if (
        not isinstance(colours, list)
        or len(colours) != COLOURS
        or not all(isinstance(c, str) and c.strip() for c in colours)
        or len(set(colours)) != COLOURS
    ):
        raise EditionError(f"edition field 'colours': {COLOURS} different colour names")
    cols = tuple(str(c) for c in colours)
    listed = raw.get("command")
    if not isinstance(listed, list):
        raise EditionError("edition field 'command': a list of commands ([[command]] tables)")
    commands: list[Command] = []
    seen: set[str] = set()
    for i, item in enumerate(listed):
        cmd = _command(item, i, cols)
        if cmd.name.casefold() in seen:
            raise EditionError(f"command {cmd.name!r} field 'name': the name is used twice")
        seen.add(cmd.name.casefold())
        commands.append(cmd)
    for colour in cols:
        n = sum(1 for c in commands if c.colour == colour)
        if n != COMMANDS_PER_COLOUR:
            raise EditionError(
                f"edition field 'command': {n} {colour} commands; an edition has "
                f"{COMMANDS_PER_COLOUR} of each colour"
            )
    return Edition(name=name.strip(), title=title.strip(), colours=cols, commands=tuple(commands))


def _shipped(name: str) -> str:
    return resources.files(__package__).joinpath("commands", f"{name}.toml").read_text(encoding="utf-8")


PRESET_TEXTS: Mapping[str, str] = {"daedalus": _shipped("daedalus")}
"""The shipped editions' texts by name (read once, at import)."""

PRESETS: Mapping[str, Edition] = {k: parse_edition(v) for k, v in PRESET_TEXTS.items()}
DEFAULT_EDITION = "daedalus"


def edition_of(value: str) -> Edition:
    """The edition a match option names: a shipped edition's name, or an edition text."""
    if value in PRESETS:
        return PRESETS[value]
    return parse_edition(value)


def effect_words(effects: tuple[Effect, ...]) -> str:
    return ", ".join(e.text() for e in effects) if effects else "nothing"

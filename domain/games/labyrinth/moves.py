"""Labyrinth moves as data, read from English text in the rule book's vocabulary or from JSON.

A player's turn is one `Command`:

- `kind="move"`: actions before the movement (`before`), exactly one movement (`go`),
  actions after it (`after`), conditional actions (`when`, 6.5: each a condition on the
  movement's result and the actions done when it holds, after the `after` actions, in the
  order given), and the dark flags: `dark` (6.7, "don't tell the result") and `tell_wall`
  (6.8, a semi-dark move: "don't tell where I end up but tell me if I hit a wall").
- `kind="skip"` (6.6), `kind="status"` (6.4: what I carry, free) and `kind="recall"` with
  `player` (6.3: the last move of player N; players are numbered from 1, seat + 1).

Actions (2.1, 5.2): `Shoot(direction)`, `Blow(direction)` (a grenade into that wall),
`Leave(item, count)` (onto the player's own cell), `Throw(item, direction, count)` (onto
the neighbouring cell; an item thrown into a wall falls at the player's feet), `SetMine(
direction)` (activate the landmine and set it here, direction None, or on the neighbour)
and `Take(which)` (among the treasures lying on the player's cell: "new" or "topmost"
(the last one brought), "old" (keep the one carried), or a place counted from the lowest,
1 being the lowest). A movement is a direction, "flow" (go by the flow, from a river) or
"loop" (go by the loop, from a pit).

`parse_command(text)` reads what a person types; `command_from_json` the structured form
(`command_to_json` writes it); `render_command(command)` writes the canonical text, which
parses back to the same command. Both readers raise `MoveError`: for text with the
column (from 1) where the text stops being a move and what was expected there, for JSON
with the path of the bad value (`$.before[0].direction`). The vocabulary and grammar are
documented in docs/rules/labyrinth.md ("Moves").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, cast

import msgspec

from domain.games.labyrinth.plan import DIRECTIONS, Direction

Movement = Literal["up", "right", "down", "left", "flow", "loop"]
MOVEMENTS: tuple[Movement, ...] = ("up", "right", "down", "left", "flow", "loop")
Item = Literal["bullet", "grenade", "landmine", "treasure", "corpse"]
ITEMS: tuple[Item, ...] = ("bullet", "grenade", "landmine", "treasure", "corpse")
ONE_OF_A_KIND: frozenset[str] = frozenset({"landmine", "treasure", "corpse"})
"""Items a player carries one of at most (5.1): counts of them are always 1."""
MAX_COUNT = 3
"""The most bullets or grenades a player carries (5.1), so the most one action moves."""
Condition = Literal[
    "treasure", "bullet", "grenade", "landmine", "corpse",
    "pit", "river", "delta", "hospital", "weaponry", "land", "wall",
]
CONDITIONS: tuple[Condition, ...] = (
    "treasure", "bullet", "grenade", "landmine", "corpse",
    "pit", "river", "delta", "hospital", "weaponry", "land", "wall",
)
"""What a conditional action may depend on: finding an item on the cell the movement ends
on, ending in a cell of a type (a pit: fell into one; a river: carried by the flow), or
hitting a wall."""
TreasureChoice = Literal["new", "topmost", "old"] | int
Kind = Literal["move", "skip", "status", "recall"]


class MoveError(ValueError):
    """Text or JSON that is not a Labyrinth command. `column` (from 1) is where a text
    stops being a move, `path` the JSON path of a bad value, `expected` what would do."""

    def __init__(self, message: str, *, column: int | None = None, expected: str = "",
                 path: str | None = None) -> None:
        self.message = message
        self.column = column
        self.expected = expected
        self.path = path
        where = f"column {column}: " if column is not None else (f"{path}: " if path else "")
        super().__init__(where + message)


# --- the data ------------------------------------------------------------------------------


class Shoot(msgspec.Struct, frozen=True, tag="shoot", forbid_unknown_fields=True, omit_defaults=True):
    """Fire a bullet in a direction (5.5); under option 7.3's named target, at `player`
    (numbered from 1) on `cell` (row, column), both or neither."""

    direction: Direction
    player: int | None = None
    cell: tuple[int, int] | None = None


class Blow(msgspec.Struct, frozen=True, tag="blow", forbid_unknown_fields=True):
    """Throw a grenade into the wall on that side (5.4)."""

    direction: Direction


class Leave(msgspec.Struct, frozen=True, tag="leave", forbid_unknown_fields=True):
    """Leave items on the player's own cell (5.2)."""

    item: Item
    count: int = 1


class Throw(msgspec.Struct, frozen=True, tag="throw", forbid_unknown_fields=True):
    """Throw items onto the neighbouring cell (5.2; a landmine is thrown unactivated)."""

    item: Item
    direction: Direction
    count: int = 1


class SetMine(msgspec.Struct, frozen=True, tag="set_mine", forbid_unknown_fields=True):
    """Activate the landmine carried and set it here (None) or on the neighbour (5.7)."""

    direction: Direction | None = None


class Take(msgspec.Struct, frozen=True, tag="take", forbid_unknown_fields=True):
    """Choose among the treasures on the player's cell (5.8)."""

    which: TreasureChoice


Action = Shoot | Blow | Leave | Throw | SetMine | Take


class When(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Conditional actions (6.5): done when the movement's result meets `if_`."""

    if_: Condition = msgspec.field(name="if")
    then: tuple[Action, ...] = ()


class Command(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One turn's command; see the module's docstring."""

    kind: Kind = "move"
    before: tuple[Action, ...] = ()
    go: Movement | None = None
    after: tuple[Action, ...] = ()
    when: tuple[When, ...] = ()
    dark: bool = False
    tell_wall: bool = False
    player: int | None = None


SKIP = Command(kind="skip")
STATUS = Command(kind="status")


def check_command(command: Command) -> Command:
    """The command, if it is one the rules can read; MoveError naming the field if not."""
    if command.kind != "move":
        extra = [name for name in ("before", "go", "after", "when", "dark", "tell_wall")
                 if getattr(command, name) != getattr(SKIP, name)]
        if extra:
            raise MoveError(f"a {command.kind} has no {extra[0]}", path=f"$.{extra[0]}")
        if command.kind == "recall":
            if command.player is None or command.player < 1:
                raise MoveError("recall names a player, numbered from 1", path="$.player")
        elif command.player is not None:
            raise MoveError(f"a {command.kind} names no player", path="$.player")
        return command
    if command.player is not None:
        raise MoveError("a move names no player (recall does)", path="$.player")
    if command.go is None:
        raise MoveError("a move has exactly one movement: go up, right, down or left, "
                        "by the flow or by the loop", path="$.go")
    if command.tell_wall and not command.dark:
        raise MoveError("tell_wall belongs to a semi-dark move: set dark too", path="$.tell_wall")
    for name, actions in (("before", command.before), ("after", command.after)):
        for i, action in enumerate(actions):
            _check_action(action, f"$.{name}[{i}]")
    for i, when in enumerate(command.when):
        if not when.then:
            raise MoveError("a condition needs an action to do", path=f"$.when[{i}].then")
        for j, action in enumerate(when.then):
            _check_action(action, f"$.when[{i}].then[{j}]")
    return command


def _check_action(action: Action, path: str) -> None:
    if isinstance(action, Shoot):
        if (action.player is None) != (action.cell is None):
            raise MoveError("a named target is a player and the cell it is on, both or neither",
                            path=path + (".cell" if action.cell is None else ".player"))
        if action.player is not None and action.player < 1:
            raise MoveError("players are numbered from 1", path=path + ".player")
        if action.cell is not None and min(action.cell) < 1:
            raise MoveError("rows and columns count from 1", path=path + ".cell")
    if isinstance(action, Leave | Throw):
        top = 1 if action.item in ONE_OF_A_KIND else MAX_COUNT
        if not 1 <= action.count <= top:
            raise MoveError(f"a player carries at most {top} {_plural(action.item, top)}",
                            path=path + ".count")
        if isinstance(action, Throw) and action.item == "grenade":
            raise MoveError("a grenade is thrown into a wall: blow", path=path + ".item")
    if isinstance(action, Take) and isinstance(action.which, int) and action.which < 1:
        raise MoveError("treasures are counted from the lowest, 1", path=path + ".which")


# --- JSON ----------------------------------------------------------------------------------

_DECODER = msgspec.json.Decoder(Command)


def command_to_json(command: Command) -> str:
    return msgspec.json.encode(command).decode()


def command_to_builtins(command: Command) -> Any:
    """The structured form as decoded JSON (dicts, lists, strings, numbers)."""
    return msgspec.json.decode(msgspec.json.encode(command))


def command_from_json(data: str | bytes) -> Command:
    """The structured form: MoveError with the path of what is wrong."""
    try:
        command = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        text = str(exc)
        path = text.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in text else "$"
        raise MoveError(text.split(" - at `")[0], path=path) from None
    except msgspec.DecodeError as exc:
        raise MoveError(f"not JSON: {exc}", path="$") from None
    return check_command(command)


def command_from_builtins(value: Any) -> Command:
    try:
        command = msgspec.convert(value, Command)
    except msgspec.ValidationError as exc:
        text = str(exc)
        path = text.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in text else "$"
        raise MoveError(text.split(" - at `")[0], path=path) from None
    return check_command(command)


# --- rendering -----------------------------------------------------------------------------

_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "the": 1, "two": 2, "three": 3}
_ORDINALS = {1: "", 2: "second ", 3: "third ", 4: "fourth ", 5: "fifth "}
_ORDINAL_WORDS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5}


def _plural(item: str, count: int) -> str:
    return item if count == 1 else item + "s"


def _ordinal(n: int) -> str:
    if n in _ORDINALS:
        return _ORDINALS[n]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix} "


def treasure_place(n: int) -> str:
    """The name of the n-th treasure of a cell from the lowest: "lowest", "second lowest"."""
    return f"{_ordinal(n)}lowest"


def _things(item: str, count: int) -> str:
    if count == 1:
        return ("the " if item in ONE_OF_A_KIND else "a ") + item
    return f"{count} {item}s"


def render_action(action: Action) -> str:
    if isinstance(action, Shoot):
        if action.player is not None and action.cell is not None:
            return f"shoot {action.direction} at player {action.player} on {action.cell[0]},{action.cell[1]}"
        return f"shoot {action.direction}"
    if isinstance(action, Blow):
        return f"blow the {action.direction} wall"
    if isinstance(action, Leave):
        return f"leave {_things(action.item, action.count)}"
    if isinstance(action, Throw):
        return f"throw {_things(action.item, action.count)} {action.direction}"
    if isinstance(action, SetMine):
        return "set the mine" + (f" {action.direction}" if action.direction else "")
    which = action.which
    if which == "old":
        return "keep the old treasure"
    if isinstance(which, int):
        return f"take the {_ordinal(which)}lowest treasure"
    return f"take the {which} treasure"


def render_movement(go: Movement) -> str:
    return f"go by the {go}" if go in ("flow", "loop") else f"go {go}"


_CONDITION_TEXT: dict[str, str] = {
    **{item: f"find {'an' if item[0] in 'aeiou' else 'a'} {item}" for item in ITEMS},
    "pit": "fall into a pit",
    "river": "walk into a river",
    "delta": "walk into a delta",
    "hospital": "walk into a hospital",
    "weaponry": "walk into a weaponry",
    "land": "walk onto land",
    "wall": "hit a wall",
}


def render_command(command: Command) -> str:
    """The canonical text of a command: `parse_command(render_command(c)) == c`."""
    if command.kind == "skip":
        return "skip"
    if command.kind == "status":
        return "status"
    if command.kind == "recall":
        return f"recall {command.player}"
    assert command.go is not None
    parts = [render_action(a) for a in command.before]
    parts.append(render_movement(command.go))
    parts += [render_action(a) for a in command.after]
    text = ", ".join(parts)
    for when in command.when:
        text += f"; if I {_CONDITION_TEXT[when.if_]}, " + ", ".join(render_action(a) for a in when.then)
    if command.tell_wall:
        text += "; don't tell where I end up but tell me if I hit a wall"
    elif command.dark:
        text += "; don't tell the result"
    return text


# --- reading text --------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[0-9]+(?:st|nd|rd|th)?|[,;.:!]|\S")
_SEPARATORS = {",", ";", ".", ":", "!", "then", "and", "finally", "also", "next", "after", "that"}
_RESETS = {";", ".", "!"}
_DIRECTIONS = set(DIRECTIONS)
_ITEM_WORDS: dict[str, Item] = {
    "bullet": "bullet", "bullets": "bullet", "grenade": "grenade", "grenades": "grenade",
    "landmine": "landmine", "landmines": "landmine", "mine": "landmine", "mines": "landmine",
    "treasure": "treasure", "treasures": "treasure", "corpse": "corpse", "corpses": "corpse",
}
_PLACE_WORDS: dict[str, Condition] = {
    "pit": "pit", "river": "river", "delta": "delta", "hospital": "hospital",
    "weaponry": "weaponry", "armory": "weaponry", "armoury": "weaponry", "land": "land",
    "wall": "wall",
}
_GO = {"go", "move", "walk", "step", "run"}
_MOVE_HELP = "an action: go, shoot, blow, leave, throw, set the mine, take, or a condition (if I ...)"
HELP = (
    "a move is one movement (go up/right/down/left, go by the flow, go by the loop) with "
    "actions before and after it (shoot DIR, blow the DIR wall, leave/throw ITEM [DIR], "
    "set the mine [DIR], take the new treasure), conditions (if I find a treasure, ...; "
    "if I fall into a pit, ...) and 'don't tell the result'; or skip, status, recall N"
)


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        low = text.lower().replace("\u2019", "'")
        self.words = [(m.group(), m.start() + 1) for m in _TOKEN.finditer(low)]
        self.i = 0

    def peek(self, ahead: int = 0) -> str | None:
        j = self.i + ahead
        return self.words[j][0] if j < len(self.words) else None

    def column(self) -> int:
        return self.words[self.i][1] if self.i < len(self.words) else len(self.text.rstrip()) + 1

    def at_end(self) -> bool:
        return self.i >= len(self.words)

    def take(self) -> str:
        word = self.words[self.i][0]
        self.i += 1
        return word

    def accept(self, *words: str) -> str | None:
        word = self.peek()
        if word is not None and word in words:
            self.i += 1
            return word
        return None

    def fail(self, expected: str, message: str | None = None) -> MoveError:
        found = self.peek()
        what = "the end of the move" if found is None else repr(self.words[self.i][0])
        return MoveError(message or f"expected {expected}, not {what}", column=self.column(),
                         expected=expected)

    def expect(self, expected: str, *words: str) -> str:
        word = self.accept(*words)
        if word is None:
            raise self.fail(expected)
        return word


def _direction(t: _Tokens, what: str = "a direction: up, right, down or left") -> Direction:
    if t.peek() == "to" and t.peek(1) == "the":
        t.i += 2
    elif t.peek() in ("to", "the"):
        t.i += 1
    word = t.accept(*DIRECTIONS)
    if word is None:
        raise t.fail(what)
    return cast(Direction, word)


def _number(t: _Tokens, what: str) -> int:
    word = t.peek()
    if word is None or not word.isdigit() or int(word) < 1:
        raise t.fail(f"{what}, a number from 1")
    t.take()
    return int(word)


def _optional_direction(t: _Tokens) -> Direction | None:
    if t.accept("here", "there"):
        return None
    if t.peek() in _DIRECTIONS or (t.peek() in ("to", "the") and
                                   (t.peek(1) in _DIRECTIONS or t.peek(2) in _DIRECTIONS)):
        return _direction(t)
    return None


def _count(t: _Tokens) -> int | None:
    word = t.peek()
    if word is None:
        return None
    if word.isdigit():
        t.i += 1
        return int(word)
    if word in _NUMBER_WORDS:
        t.i += 1
        return _NUMBER_WORDS[word]
    return None


def _item(t: _Tokens) -> tuple[Item, int]:
    column = t.column()
    count = _count(t)
    word = t.peek()
    if word not in _ITEM_WORDS:
        raise t.fail("an item: bullet, grenade, landmine, treasure or corpse")
    t.i += 1
    item = _ITEM_WORDS[word]
    n = 1 if count is None else count
    top = 1 if item in ONE_OF_A_KIND else MAX_COUNT
    if not 1 <= n <= top:
        raise MoveError(f"a player carries at most {top} {_plural(item, top)}", column=column,
                        expected=f"a count from 1 to {top}")
    return item, n


def _blow(t: _Tokens) -> Blow:
    # blow [up] [the] DIR [wall] | blow [up] [the] wall [to the / on the] DIR
    if t.peek() == "up" and t.peek(1) in ("the", "to", "on", *DIRECTIONS):
        t.i += 1
    t.accept("the")
    if t.accept("wall"):
        if t.peek() == "on" and t.peek(1) == "the":
            t.i += 2
        direction = _direction(t, "the wall's side: up, right, down or left")
    else:
        direction = _direction(t, "the wall to blow: the up, right, down or left wall")
        t.accept("wall")
    return Blow(direction)


def _take(t: _Tokens, verb: str) -> Take:
    t.accept("the")
    if verb == "keep":
        t.expect("'old' (keep the old treasure)", "old")
        t.expect("'treasure'", "treasure")
        return Take("old")
    which: TreasureChoice
    column = t.column()
    word = t.peek()
    if word in ("new", "newly"):
        t.i += 1
        if word == "newly":
            t.expect("'found'", "found")
        which = "new"
    elif word == "old":
        t.i += 1
        which = "old"
    elif word == "topmost":
        t.i += 1
        which = "topmost"
    elif word == "lowest":
        t.i += 1
        which = 1
    elif word in _ORDINAL_WORDS or (word is not None and re.fullmatch(r"[0-9]+(st|nd|rd|th)", word)):
        t.i += 1
        which = _ORDINAL_WORDS[word] if word in _ORDINAL_WORDS else int(re.sub(r"\D", "", word))
        if which < 1:
            raise MoveError("treasures are counted from the lowest, 1", column=column,
                            expected="second lowest, third lowest, ...")
        t.expect("'lowest'", "lowest")
    else:
        raise t.fail("which treasure: new, old, topmost, lowest, second lowest, ...")
    t.expect("'treasure'", "treasure")
    return Take(which)


def _action(t: _Tokens) -> Action | None:
    """An action at the cursor, or None when the next word starts none."""
    verb = t.peek()
    if verb in ("shoot", "fire"):
        t.i += 1
        direction = _direction(t)
        if t.peek() != "at":
            return Shoot(direction)
        t.take()
        t.expect("'player' (shoot up at player 2 on 3,4)", "player")
        player = _number(t, "the player's number")
        t.expect("'on' and the cell (on 3,4)", "on", "at", "in")
        row = _number(t, "the cell's row")
        t.expect("',' between the row and the column (3,4)", ",")
        column = _number(t, "the cell's column")
        return Shoot(direction, player, (row, column))
    if verb == "blow":
        t.i += 1
        return _blow(t)
    if verb in ("leave", "drop", "put"):
        t.i += 1
        if verb == "put":
            t.expect("'down'", "down")
        item, count = _item(t)
        t.accept("here", "there")
        return Leave(item, count)
    if verb == "throw":
        t.i += 1
        column = t.column()
        item, count = _item(t)
        if item == "grenade":
            if count != 1:
                raise MoveError("one grenade is thrown into a wall at a time", column=column,
                                expected="a grenade")
            t.accept("into", "at")
            return _blow(t) if t.peek() != "to" else Blow(_direction(t))
        return Throw(item, _direction(t, "where to throw it: up, right, down or left"), count)
    if verb in ("set", "activate", "plant"):
        t.i += 1
        t.accept("the", "a", "my")
        t.expect("'mine' or 'landmine'", "mine", "landmine")
        return SetMine(_optional_direction(t))
    if verb in ("take", "keep", "pick"):
        t.i += 1
        if verb == "pick":
            t.expect("'up'", "up")
        return _take(t, verb)
    return None


def _movement(t: _Tokens) -> Movement | None:
    if t.peek() not in _GO and t.peek() != "follow":
        return None
    verb = t.take()
    if verb == "follow" or t.peek() in ("by", "with", "along", "through"):
        if verb != "follow":
            t.take()
        t.accept("the")
        word = t.expect("'flow' or 'loop'", "flow", "loop", "river")
        return "flow" if word in ("flow", "river") else "loop"
    return _direction(t, "where to go: up, right, down, left, by the flow or by the loop")


def _condition(t: _Tokens) -> Condition:
    t.expect("'I' (if I find a treasure, if I fall into a pit, ...)", "i")
    verb = t.peek()
    if verb in ("find", "found", "get", "pick"):
        t.i += 1
        if verb == "pick":
            t.expect("'up'", "up")
        if t.peek() in ("into", "in", "onto", "to"):
            return _place(t)
        t.accept("a", "an", "any", "some", "the")
        word = t.peek()
        if word in _ITEM_WORDS:
            t.i += 1
            return _ITEM_WORDS[word]
        raise t.fail("what I find: a treasure, a bullet, a grenade, a landmine or a corpse")
    if verb in ("fall", "walk", "step", "end", "am", "reach", "hit", "land", "arrive"):
        t.i += 1
        if verb == "end":
            t.expect("'up'", "up")
        if verb == "am":
            t.expect("'carried'", "carried")
            t.expect("'by the flow'", "by")
            t.accept("the")
            t.expect("'flow'", "flow")
            return "river"
        return _place(t)
    raise t.fail("a condition: find ITEM, fall into a pit, walk into a river/delta/hospital/"
                 "weaponry, walk onto land, hit a wall")


def _place(t: _Tokens) -> Condition:
    t.accept("into", "in", "onto", "on", "to", "at")
    t.accept("a", "an", "the")
    word = t.peek()
    if word in _PLACE_WORDS:
        t.i += 1
        return _PLACE_WORDS[word]
    raise t.fail("a place: a pit, a river, a delta, a hospital, a weaponry, land, or a wall")


def _dark(t: _Tokens) -> str:
    """After "don't"/"do not": "tell the result" or "tell where I end up" -> 'dark'/'where'."""
    t.expect("'tell'", "tell")
    t.accept("me")
    if t.accept("the", "my"):
        t.expect("'result'", "result", "results")
        return "dark"
    if t.accept("anything"):
        return "dark"
    t.expect("'the result' or 'where I end up'", "where")
    if t.accept("did"):
        t.expect("'I'", "i")
        t.expect("'end up'", "end")
        t.expect("'up'", "up")
        return "where"
    t.expect("'I'", "i")
    if t.accept("end"):
        t.expect("'up'", "up")
    else:
        t.expect("'end up'", "am", "land")
    return "where"


def _tell_wall(t: _Tokens) -> None:
    t.accept("me")
    t.expect("'if' or 'whether'", "if", "whether")
    t.expect("'I'", "i")
    t.expect("'hit'", "hit")
    t.accept("a", "the")
    t.expect("'wall'", "wall")


def parse_command(text: str) -> Command:
    """A command from what a person types (see the module's docstring); MoveError saying
    at which column the text stops being a move and what was expected there."""
    t = _Tokens(text)
    if t.at_end():
        raise t.fail("a move", f"expected a move, not nothing: {HELP}")
    first = t.peek()
    if first in ("skip", "pass"):
        t.take()
        t.accept(".", "!")
        if not t.at_end():
            raise t.fail("the end of the move (a skip is the whole move)")
        return SKIP
    if first == "status":
        t.take()
        t.accept(".", "?")
        if not t.at_end():
            raise t.fail("the end of the move (status is asked on its own)")
        return STATUS
    if first == "recall":
        t.take()
        if t.accept("the"):
            t.expect("'last'", "last")
            t.expect("'move'", "move")
            t.expect("'of'", "of")
        t.accept("player")
        column = t.column()
        word = t.peek()
        if word is None or not word.isdigit():
            raise t.fail("the player's number (recall 3)")
        t.take()
        if int(word) < 1:
            raise MoveError("players are numbered from 1", column=column, expected="a number from 1")
        t.accept(".")
        if not t.at_end():
            raise t.fail("the end of the move (recall asks for one player's last move)")
        return Command(kind="recall", player=int(word))
    return _parse_move(t)


def _numbering(t: _Tokens) -> bool:
    """A clause's number as 6.8 writes it ("1. Go right, ... but 2. tell me ..."): the
    number is skipped, its dot after it."""
    word = t.peek()
    return word is not None and word.isdigit() and t.peek(1) in (".", ")")


def _parse_move(t: _Tokens) -> Command:
    before: list[Action] = []
    after: list[Action] = []
    whens: list[tuple[Condition, list[Action]]] = []
    go: Movement | None = None
    condition: list[Action] | None = None
    condition_column = 0
    dark = tell_wall = False
    where_column = 0

    def close_condition() -> None:
        if condition is not None and not condition:
            raise MoveError("a condition needs an action to do", column=condition_column,
                            expected="an action after the condition")

    while True:
        while not t.at_end() and (t.peek() in _SEPARATORS | {"but", "?", ")"} or _numbering(t)):
            if t.take() in _RESETS:
                close_condition()
                condition = None
        if t.at_end():
            break
        column = t.column()
        word = t.peek()
        if word == "if":
            t.take()
            if go is None:
                raise MoveError("a condition is about the movement's result: put it after the movement",
                                column=column, expected="the movement before a condition")
            close_condition()
            cond = _condition(t)
            condition = []
            condition_column = t.column()
            whens.append((cond, condition))
            continue
        if word in ("don't", "do", "dont"):
            t.take()
            if word == "do":
                t.expect("'not'", "not")
            kind = _dark(t)
            if dark:
                raise MoveError("the move is dark already", column=column, expected="one 'don't tell'")
            dark = True
            where_column = column if kind == "where" else 0
            close_condition()
            condition = None
            continue
        if word == "tell":
            t.take()
            if not where_column:
                raise MoveError("'tell me if I hit a wall' goes with 'don't tell where I end up'",
                                column=column, expected="don't tell where I end up")
            _tell_wall(t)
            tell_wall = True
            continue
        movement = _movement(t)
        if movement is not None:
            if go is not None:
                raise MoveError("a move has exactly one movement; this is a second one", column=column,
                                expected="an action, not a second movement")
            go = movement
            continue
        action = _action(t)
        if action is None:
            raise t.fail(_MOVE_HELP if go is not None or before else
                         "a movement or an action: go, shoot, blow, leave, throw, set the mine, take")
        if condition is not None:
            condition.append(action)
        elif go is None:
            before.append(action)
        else:
            after.append(action)
    close_condition()
    if go is None:
        raise MoveError("a move has exactly one movement: go up, right, down or left, by the flow "
                        "or by the loop", column=t.column(), expected="a movement")
    return check_command(Command(
        before=tuple(before), go=go, after=tuple(after),
        when=tuple(When(c, tuple(a)) for c, a in whens), dark=dark, tell_wall=tell_wall,
    ))


def parse_any(value: str | bytes | Sequence[Any] | dict[str, Any]) -> Command:
    """Text (what a person types), JSON text (starting with `{`) or decoded JSON."""
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        return command_from_json(value) if value.lstrip().startswith("{") else parse_command(value)
    return command_from_builtins(value)


def parse_action(text: str) -> Action:
    """One action alone ("throw the corpse right"), as it would stand in a move."""
    t = _Tokens(text)
    action = _action(t)
    if action is None:
        raise t.fail("an action: shoot, blow, leave, throw, set the mine, take")
    t.accept(".")
    if not t.at_end():
        raise t.fail("the end of the action")
    return action

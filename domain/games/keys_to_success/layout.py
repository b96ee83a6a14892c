"""Keys to Success / Gatekeeping layouts: the levels and their gates, as data.

The layout picture of the rule texts is lost, so a layout is a small text file (the
match option `layout` holds its text, or the name of a preset). The format,
`daedalus-layout 1`:

    ; Lines starting with ';' are comments; blank lines are ignored.
    ; One line per level, from the outermost level (where everyone starts) inwards.
    ; Each line lists the level's gates from left to right as NAME:TYPE.
    A:open B:open C:pass D:open E:open F:open G:pass H:open I:open J:garnet
    K:open L:open M:pass N:open O:open P:pass Q:open R:garnet
    ...

- NAME: 1 to 8 printable characters without spaces, ':' or ';'; unique in the layout,
  ignoring case (commands may name a gate in either case).
- TYPE: `open` (green; one player a round), `pass` (orange; closes for good once
  entered) or `garnet` (purple; earns a garnet, closed the round after an entry).
  Short forms: `o`, `p`, `g`; the colours `green`, `orange`, `purple` are accepted too.
- 1 to 12 levels, 1 to 26 gates a level. Gates next to each other in a line are
  adjacent; the two ends of a line are not.

`parse_layout` reports the first problem with its line number (LayoutError);
`format_layout` gives the canonical text (no comments, full type names), which is what
a match records in its options.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

_TYPE_WORDS: Mapping[str, str] = {
    "open": "open", "o": "open", "green": "open",
    "pass": "pass", "p": "pass", "orange": "pass",
    "garnet": "garnet", "g": "garnet", "purple": "garnet",
}
MAX_LEVELS = 12
MAX_GATES = 26
MAX_NAME = 8
MAX_TEXT = 8_000


class LayoutError(ValueError):
    """A layout that does not parse or validate; the message names the line and gate."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"layout line {line}: {message}" if line is not None else f"layout: {message}")
        self.line = line
        self.detail = message


class Gate(msgspec.Struct, frozen=True):
    name: str
    kind: str  # open | pass | garnet
    depth: int  # the level it leads out of (0: the outermost)
    index: int  # its position in the level, 0 = leftmost


class Layout(msgspec.Struct, frozen=True):
    levels: tuple[tuple[Gate, ...], ...]

    @property
    def depth(self) -> int:
        """The number of levels with gates; a player at this depth has escaped."""
        return len(self.levels)

    @property
    def gates(self) -> tuple[Gate, ...]:
        return tuple(g for level in self.levels for g in level)

    def find(self, name: str) -> Gate | None:
        """The gate of that name (exact, else ignoring case)."""
        for gate in self.gates:
            if gate.name == name:
                return gate
        folded = name.casefold()
        for gate in self.gates:
            if gate.name.casefold() == folded:
                return gate
        return None

    def adjacent(self, a: Gate, b: Gate) -> bool:
        return a.depth == b.depth and abs(a.index - b.index) == 1


def parse_layout(text: str) -> Layout:
    """A validated layout from its text (LayoutError naming the line if it is not one)."""
    if not isinstance(text, str):
        raise LayoutError("a layout is a text")
    if len(text) > MAX_TEXT:
        raise LayoutError(f"the text is over {MAX_TEXT} characters")
    levels: list[tuple[Gate, ...]] = []
    seen: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        depth = len(levels)
        if depth >= MAX_LEVELS:
            raise LayoutError(f"more than {MAX_LEVELS} levels", number)
        words = line.split()
        if len(words) > MAX_GATES:
            raise LayoutError(f"{len(words)} gates in one level; at most {MAX_GATES}", number)
        gates: list[Gate] = []
        for word in words:
            name, sep, kind_word = word.rpartition(":")
            if not sep:
                raise LayoutError(
                    f"{word!r} is not NAME:TYPE (TYPE is open, pass or garnet), e.g. 'A:open'", number
                )
            if not name or len(name) > MAX_NAME or not name.isprintable() or ":" in name or ";" in name:
                raise LayoutError(
                    f"{word!r}: a gate name is 1 to {MAX_NAME} printable characters "
                    "without spaces, ':' or ';'",
                    number,
                )
            kind = _TYPE_WORDS.get(kind_word.lower())
            if kind is None:
                raise LayoutError(
                    f"gate {name!r}: unknown type {kind_word!r} (open, pass or garnet)", number
                )
            key = name.casefold()
            if key in seen:
                first, line_no = seen[key]
                raise LayoutError(
                    f"gate {name!r} appears twice (also {first!r} on line {line_no}); "
                    "names are unique, ignoring case",
                    number,
                )
            seen[key] = (name, number)
            gates.append(Gate(name=name, kind=kind, depth=depth, index=len(gates)))
        levels.append(tuple(gates))
    if not levels:
        raise LayoutError("no levels: write one line of gates per level, outermost first")
    return Layout(levels=tuple(levels))


def format_layout(layout: Layout) -> str:
    """The canonical text of a layout (no comments, full type names)."""
    return "\n".join(" ".join(f"{g.name}:{g.kind}" for g in level) for level in layout.levels)


# --- presets -------------------------------------------------------------------------

RULINGS_LAYOUT = """\
; The layout of RULINGS.md, from the clarifications' gate letters: the rightmost gate of
; every level is Garnet; Pass gates C, G, M, P, U, Z; the rest Open.
A:open B:open C:pass D:open E:open F:open G:pass H:open I:open J:garnet
K:open L:open M:pass N:open O:open P:pass Q:open R:garnet
S:open T:open U:pass V:open W:open X:garnet
Y:open Z:pass &:open #:garnet
=:open +:open -:garnet
"""

# The default: see docs/rules/keys-to-success.md, "Tuning the default layout".
DEFAULT_LAYOUT = RULINGS_LAYOUT

PRESETS: Mapping[str, str] = {
    "default": DEFAULT_LAYOUT,
    "rulings": RULINGS_LAYOUT,
}


def layout_text(option: str) -> str:
    """The canonical layout text for a `layout` option: a preset name or a layout text."""
    if not isinstance(option, str):
        raise LayoutError("a layout is a text (or a preset name: " + ", ".join(PRESETS) + ")")
    source = PRESETS.get(option.strip(), option)
    return format_layout(parse_layout(source))

"""Reading a sequence of moves as a player types it.

Accepted, in either case, separated by spaces (or commas) where words are used:
- words: `up down left right`, or `north south west east`;
- letters: `U D L R`, or `N S W E`, which may also be run together (`UURDL`, `nnE`).
A sequence keeps to one style: words of one kind or letters of one kind. Mixing
`up`/`north` words, `U`/`N` letters, or words with letters is refused, naming the two
tokens that disagree. An empty sequence (nothing but spaces) is zero moves.

The result is the canonical form: a string over `UDLR` (north = up, east = right).
"""

from __future__ import annotations

import re

WORDS: dict[str, str] = {
    "up": "U", "down": "D", "left": "L", "right": "R",
    "north": "U", "south": "D", "west": "L", "east": "R",
}
_WORD_FAMILY = {w: ("udlr" if w in ("up", "down", "left", "right") else "nswe") for w in WORDS}
_NSWE = {"n": "U", "s": "D", "w": "L", "e": "R"}

STYLE_NAMES: dict[tuple[str, str], str] = {
    ("word", "udlr"): "the words up/down/left/right",
    ("word", "nswe"): "the words north/south/west/east",
    ("letter", "udlr"): "the letters U/D/L/R",
    ("letter", "nswe"): "the letters N/S/W/E",
}

HELP = (
    "moves are up/down/left/right, north/south/west/east, or their letters U/D/L/R or "
    "N/S/W/E (any case, spaces allowed), in one style"
)


class MoveError(ValueError):
    """Text that is not a sequence of moves; the message says what is wrong."""


def parse_moves(text: str) -> str:
    """The canonical `UDLR` string of a typed sequence, or MoveError."""
    style: tuple[str, str] | None = None
    first = ""
    out: list[str] = []
    for token in re.split(r"[\s,]+", text.strip()):
        if not token:
            continue
        low = token.lower()
        if low in WORDS:
            kind: tuple[str, str] = ("word", _WORD_FAMILY[low])
            moves = WORDS[low]
        elif set(low) <= set("udlr"):
            kind, moves = ("letter", "udlr"), low.upper()
        elif set(low) <= set("nswe"):
            kind, moves = ("letter", "nswe"), "".join(_NSWE[c] for c in low)
        elif set(low) <= set("udlrnswe"):
            raise MoveError(
                f"{token!r} mixes the letters U/D/L/R with N/S/W/E; use one kind of letter"
            )
        else:
            raise MoveError(f"{token!r} is not a move: {HELP}")
        if style is None:
            style, first = kind, token
        elif kind != style:
            raise MoveError(
                f"{token!r} uses {STYLE_NAMES[kind]} but {first!r} uses {STYLE_NAMES[style]}: "
                "don't mix styles (words with letters, or up/down/left/right with "
                "north/south/west/east)"
            )
        out.append(moves)
    return "".join(out)

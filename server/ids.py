"""Match ids and seat tokens: random, and made of letters and digits only.

Only letters and digits, so an id never starts with "-" (a command line would read it as
an option: `daedalus play --match -x3...`) and a double click selects all of it."""

from __future__ import annotations

import secrets
import string

ALPHABET = string.ascii_letters + string.digits  # 62 symbols, 5.95 bits each


def random_id(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def new_match_id() -> str:
    """12 symbols, 71 bits: public, but not guessable by walking through them."""
    return random_id(12)


def new_seat_token() -> str:
    """32 symbols, 190 bits: the only secret a player holds."""
    return random_id(32)

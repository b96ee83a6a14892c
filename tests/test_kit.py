"""The game kit (domain/kit): option tables, clocks, simultaneous rounds, per-seat helpers."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pytest

from domain.contract import OptionsError
from domain.kit.clocks import clock_ms
from domain.kit.options import (
    MAX_CLOCK_SCALE,
    Boolean,
    ClockScale,
    Custom,
    Integer,
    OptionTable,
)
from domain.kit.rounds import SimultaneousRound
from domain.kit.seats import replace_at, update_at


class Opts(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = "a"
    count: int | None = 3
    clock_scale: float = 1.0
    fast: bool = False
    only_b: int = 0
    words: tuple[str, ...] = ()
    lo: int = 1
    hi: int = 2


def _words(value: Any, variant: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(w, str) for w in value):
        raise OptionsError("must be a list of words")
    return tuple(sorted(value))


def _ordered(variant: str, values: Any) -> None:
    if values["hi"] < values["lo"]:
        raise OptionsError("option 'hi' is below 'lo'")


TABLE = OptionTable(
    Opts,
    ("a", "b"),
    [
        Integer("count", 3, 1, 9, "how many", defaults={"b": 5}, nullable=True),
        ClockScale(),
        Boolean("fast", False, "go fast"),
        Integer("only_b", 0, 0, 100, "b only", variants=("b",), defaults={"b": 7}),
        Custom(
            "words", (), "some words", type="array", parse=_words,
            schema={"items": {"type": "string"}, "examples": [["x", "y"]]},
        ),
        Integer("lo", 1, 0, 10, "low"),
        Integer("hi", 2, 0, 10, "high"),
    ],
    checks=[_ordered],
)


def test_defaults_per_variant() -> None:
    assert TABLE.configure("a", {}) == Opts(variant="a", count=3, only_b=0)
    assert TABLE.configure("b", {}) == Opts(variant="b", count=5, only_b=7)
    assert TABLE.defaults("b") == TABLE.configure("b", {})


def test_schema_lists_the_variant_s_options_with_every_bound() -> None:
    a, b = TABLE.schema("a"), TABLE.schema("b")
    assert "only_b" not in a and b["only_b"]["default"] == 7
    assert a["count"] == {
        "type": ["integer", "null"], "minimum": 1, "maximum": 9, "default": 3,
        "description": "how many",
    }
    assert b["count"]["default"] == 5
    assert a["clock_scale"]["exclusiveMinimum"] == 0
    assert a["clock_scale"]["maximum"] == MAX_CLOCK_SCALE
    assert a["words"]["default"] == [] and a["words"]["examples"] == [["x", "y"]]
    assert a["fast"] == {"type": "boolean", "default": False, "description": "go fast"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"count": 0}, "option 'count' must be between 1 and 9"),
        ({"count": 10}, "option 'count' must be between 1 and 9"),
        ({"count": True}, "option 'count' must be an integer"),
        ({"count": 2.0}, "option 'count' must be an integer"),
        ({"clock_scale": 0}, "option 'clock_scale' must be a finite number above 0"),
        ({"clock_scale": float("inf")}, "option 'clock_scale' must be a finite number above 0"),
        ({"clock_scale": 1e300}, "option 'clock_scale' must be at most 1000"),
        ({"clock_scale": None}, "option 'clock_scale' must be a number"),
        ({"fast": 1}, "option 'fast' must be true or false"),
        ({"words": "x"}, "option 'words': must be a list of words"),
        ({"only_b": 3}, "option 'only_b' applies to b only"),
        ({"lo": 5, "hi": 4}, "option 'hi' is below 'lo'"),
        ({"nope": 1, "other": 2}, "unknown options 'nope', 'other' (the options of a: clock_scale, count,"),
        ({"variant": "b"}, "option 'variant' is 'b', not 'a'"),
    ],
)
def test_refusals_name_the_option(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionsError) as info:
        TABLE.configure("a", options)
    assert str(info.value).startswith(message)


def test_an_unknown_option_is_refused_listing_the_variant_s_options_only() -> None:
    with pytest.raises(OptionsError) as info:
        TABLE.configure("a", {"nope": 1})
    assert "only_b" not in str(info.value)
    with pytest.raises(OptionsError) as info:
        TABLE.configure("b", {"nope": 1})
    assert "only_b" in str(info.value)


def test_null_is_the_variant_default_where_nullable() -> None:
    assert TABLE.configure("b", {"count": None}).count == 5


def test_an_option_of_another_variant_is_accepted_at_its_default() -> None:
    """Recorded options name every field, so a create entry configures again."""
    recorded = msgspec.to_builtins(TABLE.configure("a", {"words": ["b", "a"]}))
    assert recorded["only_b"] == 0
    assert TABLE.configure("a", recorded) == TABLE.configure("a", {"words": ["a", "b"]})


def test_unknown_variant_and_a_table_that_does_not_fit_its_struct() -> None:
    with pytest.raises(OptionsError, match="unknown variant 'c'"):
        TABLE.configure("c", {})
    with pytest.raises(OptionsError, match="options must be an object"):
        TABLE.configure("a", [])
    with pytest.raises(TypeError, match="differ"):
        OptionTable(Opts, ("a",), [Integer("count", 3, 1, 9, "how many")])


def test_clock_ms() -> None:
    assert clock_ms(60, 1.0) == 60_000
    assert clock_ms(60, 1e-9) == 1
    assert clock_ms(None, 1.0, 0) == 0
    assert clock_ms(0.0004, 1.0, 0) == 0


# --- simultaneous rounds and per-seat helpers -------------------------------------------


class Seat(msgspec.Struct, frozen=True):
    pending: str | None = None
    out: bool = False


class Table(msgspec.Struct, frozen=True):
    seats: tuple[Seat, ...]
    early: bool = True
    closed_at: int | None = None


class Sent(msgspec.Struct, frozen=True):
    seat: int
    move: str


class Closed(msgspec.Struct, frozen=True):
    at: int


def _evolve(state: Table, event: Any) -> Table:
    if isinstance(event, Sent):
        return msgspec.structs.replace(
            state, seats=update_at(state.seats, event.seat, pending=event.move)
        )
    assert isinstance(event, Closed)
    return msgspec.structs.replace(state, closed_at=event.at)


ROUND: SimultaneousRound[Table, str] = SimultaneousRound(
    seats=lambda s: len(s.seats),
    pending=lambda s, seat: s.seats[seat].pending,
    in_play=lambda s, seat: not s.seats[seat].out,
    early_close=lambda s: s.early,
    close=lambda s, at: [Closed(at)],
    evolve=_evolve,
)


def test_a_round_closes_when_every_seat_in_play_is_in() -> None:
    state = Table(seats=(Seat(), Seat(out=True), Seat()))
    assert ROUND.waiting_on(state) == (0, 2) and ROUND.nobody_in(state)
    first = ROUND.accept(state, Sent(0, "a"), now=5)
    assert first.events == (Sent(0, "a"),)
    assert first.state == _evolve(state, Sent(0, "a"))  # (what the engine takes as the fold)
    state = first.state
    assert ROUND.waiting_on(state) == (2,) and not ROUND.nobody_in(state)
    # A replacement is accepted and does not close the round; warnings pass through.
    again = ROUND.accept(state, Sent(0, "b"), now=6, warnings=("changed",))
    assert again.events == (Sent(0, "b"),) and again.warnings == ("changed",)
    last = ROUND.accept(state, Sent(2, "c"), now=7)
    assert last.events == (Sent(2, "c"), Closed(7))
    assert last.state == _evolve(_evolve(state, Sent(2, "c")), Closed(7)) and last.warnings == ()


def test_without_early_close_only_the_deadline_closes_it() -> None:
    state = Table(seats=(Seat(pending="a"), Seat()), early=False)
    assert ROUND.accept(state, Sent(1, "b"), now=3).events == (Sent(1, "b"),)


def test_accept_asks_the_games_own_all_in_when_it_has_one() -> None:
    # A game's all_in_by is what accept asks (here one that never says all in, and one
    # that always does): the kit's own loop over the seats is not asked again.
    state = Table(seats=(Seat(pending="a"), Seat()))
    never = dataclasses.replace(ROUND, all_in_by=lambda s: False)
    assert never.accept(state, Sent(1, "b"), now=3).events == (Sent(1, "b"),)
    always = dataclasses.replace(ROUND, all_in_by=lambda s: True)
    assert always.accept(Table(seats=(Seat(), Seat())), Sent(0, "a"), now=4).events == (
        Sent(0, "a"), Closed(4),
    )


def test_plays_give_the_default_to_a_seat_in_play_that_missed() -> None:
    state = Table(seats=(Seat(pending="a"), Seat(out=True), Seat()))
    assert ROUND.plays(state) == ("a", None, None)
    assert ROUND.plays(state, lambda s, seat: f"default {seat}") == ("a", None, "default 2")


def test_replace_at_and_update_at() -> None:
    seats = (Seat(), Seat(), Seat())
    assert replace_at(seats, 1, Seat(out=True)) == (Seat(), Seat(out=True), Seat())
    assert update_at(seats, 2, pending="x") == (Seat(), Seat(), Seat(pending="x"))
    assert seats == (Seat(), Seat(), Seat())

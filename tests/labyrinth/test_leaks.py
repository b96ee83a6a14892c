"""Labyrinth: what a viewer receives depends only on what the rules let it know (5, 6.1,
6.7, 6.8; shared/RULINGS.md).

Two worlds of one match, played with the same commands, differ in something hidden:
a cell nothing has revealed, a player's start cell, what a dark or semi-dark move did.
Every seat that may not know the difference, and a spectator, must receive the same
update frames of both, byte for byte, until the rules make the difference public
(tests/labyrinth/leak_helpers.py says how that point is found: from the rules' own
words, never from the projection under test).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, note, settings
from hypothesis import strategies as st

from domain.engine import MatchState
from domain.games.labyrinth import rules
from domain.games.labyrinth.generate import GenerateOptions, GenerationError, generate
from domain.games.labyrinth.moves import Command, Leave
from domain.games.labyrinth.plan import DIRECTIONS, Cell, Plan, River, Side, step
from domain.rng import Rng
from projections import labyrinth as views
from projections.contract import TwinWorld, Viewer
from projections.registry import Hosted
from tests.labyrinth.leak_helpers import (
    LAB,
    Cuts,
    Pair,
    accepts,
    changes,
    check_streams,
    could_reveal,
    finish,
    first_valid,
    game_options,
    match_options,
    move_body,
    pits_kept,
    play_alone,
    play_both,
    rehearsal,
    resolved,
    turn_commands,
)

SETTINGS = settings(max_examples=int(os.environ.get("LEAK_EXAMPLES", "15")), deadline=None,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
"""A few matches each in the suite (LEAK_EXAMPLES=300 for a longer hunt). No shrinking: a
failure names the viewer, the first frame that differs and both frames, and the draws
that led there; shrinking two matches played side by side takes minutes."""


sizes = st.tuples(st.integers(4, 6), st.integers(4, 7))
"""Rows and columns of a drawn plan."""


def draw_plan(seed: int, players: int, size: tuple[int, int]) -> Plan:
    """A plan drawn from `seed` (as a host would give it), or none (the test case is not
    used) for sizes too small for the players."""
    try:
        return generate(GenerateOptions(rows=size[0], columns=size[1], players=players),
                        Rng(seed.to_bytes(8, "big"), "plan"))
    except GenerationError:
        assume(False)
        raise


# --- 1. a cell nothing revealed ------------------------------------------------------------------


CELL = {"seed": st.integers(0, 2**63), "size": sizes, "players": st.integers(2, 4), "extra": game_options,
        "entries": st.integers(3, 30), "data": st.data()}


def a_cell_nothing_could_reveal(seed: int, size: tuple[int, int], players: int, extra: dict[str, Any],
                                entries: int, data: st.DataObject, hosted: Hosted = LAB) -> None:
    """World A is a host's match on a drawn plan, played with random commands by
    everyone and then skipped to its end; world B is the same match on the plan changed in
    one cell (its type, or what lies there: a change the validator accepts) that nothing
    in A's play could reveal (leak_helpers.could_reveal). The rules must resolve every
    entry of B as they did in A, and every seat and a spectator receive the same frames of
    both up to the reveal."""
    plan = draw_plan(seed, players, size)
    match_seed = seed.to_bytes(32, "big")
    a = rehearsal(plan, players, extra, match_seed)
    played = play_alone(a, data, entries)
    history = played + finish(a)  # then everyone skips: the match ends (6.6)
    seen = could_reveal(plan, history)
    hidden = sorted(plan.cells - seen)
    assume(hidden)
    # often a cell next to one that could tell: where a leak by one cell would show
    near = [c for c in hidden if any(step(c, d) in seen for d in DIRECTIONS)]
    next_to = bool(near) and data.draw(st.booleans(), label="next to a cell that could tell")
    cell = data.draw(st.sampled_from(near if next_to else hidden), label="the changed cell")
    changed = first_valid(data, changes(plan, cell),
                          lambda other: pits_kept(plan, other, seen) and accepts(other, players, extra))
    assume(changed is not None)
    assert changed is not None
    how, other = changed
    note(f"cell {cell}: {how}; {len(history)} commands; cells that could tell: {sorted(seen)}")
    event(f"changed: {how.split()[0] if how[0] in 'ti' else how}")
    event(f"commands before the skips: {'under 10' if len(played) < 10 else '10 or more'}")
    event(f"a move missed: {any(h.seat is None for h in played)}")
    first = a.world()
    second = TwinWorld(options=match_options(other, players, extra), seed=first.seed,
                       created=first.created, script=first.script)
    both = play_both((first, second), hosted=hosted)
    for seq, (x, y) in enumerate(zip(both[0].outcomes, both[1].outcomes, strict=True)):
        if (x.rejection, resolved(x)) != (y.rejection, resolved(y)):
            # the rules themselves told the worlds apart: the rules read a cell the set
            # does not hold (an effect it misses, or a rule reading the plan where it should not)
            raise AssertionError(
                f"the cells that could tell ({sorted(seen)}) miss an effect: with cell {cell} "
                f"changed ({how}), entry {seq + 1} resolves differently:\n{x}\n{y}")
    check_streams(both, Cuts(None, {}), hosted)


@SETTINGS
@given(**CELL)
def test_a_cell_nothing_could_reveal_changes_no_stream(
        seed: int, size: tuple[int, int], players: int, extra: dict[str, Any], entries: int,
        data: st.DataObject) -> None:
    a_cell_nothing_could_reveal(seed, size, players, extra, entries, data)


def _events(pair: Pair) -> None:
    note(f"compared: {pair.until} steps of {pair.steps}; told apart early: {pair.informed}")
    compared = pair.steps if pair.until is None else pair.until
    event(f"steps compared: {'under 10' if compared < 10 else 'under 20' if compared < 20 else '20 or more'}")
    event(f"seats told something that differs before the public: {len(pair.informed)}")
    event(f"a move missed: {any(t.kind == 'tick' for t in pair.a.steps[:pair.until])}")


# --- 2. another player's start cell --------------------------------------------------------------


def _twin_cells(plan: Plan) -> list[tuple[Cell, Cell]]:
    """Pairs of cells of one type with the same things lying there (none a river: a river
    start is refused)."""
    def what(cell: Cell) -> object:
        items = plan.items_at(cell)
        treasure = plan.treasure_at(cell)
        return (plan.type_at(cell), None if items is None else (items.bullets, items.grenades, items.landmines),
                None if treasure is None else treasure.is_true)
    cells = sorted(c for c in plan.cells if not isinstance(plan.type_at(c), River))
    return [(x, y) for i, x in enumerate(cells) for y in cells[i + 1:] if what(x) == what(y)]


START = {"seed": st.integers(0, 2**63), "size": sizes, "players": st.integers(2, 4), "extra": game_options,
         "entries": st.integers(1, 30), "data": st.data()}


def a_start_cell(seed: int, size: tuple[int, int], players: int, extra: dict[str, Any], entries: int,
                 data: st.DataObject, hosted: Hosted = LAB) -> None:
    """Two worlds on one plan differ only in seat k's start cell (two cells of one type
    with the same things lying there); then the same random commands, k's moves mostly
    dark. Every other seat and a spectator receive the same frames until what everyone
    hears differs (k's own answers, a shot that hits k in one world only...); a seat the
    rules tell something that differs (its own dark move finds what k left in one world
    only) up to that point."""
    plan = draw_plan(seed, players, size)
    k = data.draw(st.integers(0, players - 1), label="k")
    here, there = data.draw(st.sampled_from(_twin_cells(plan)), label="k's two start cells")
    others = [c for c in sorted(plan.cells) if c not in (here, there) and not isinstance(plan.type_at(c), River)]
    starts = data.draw(st.permutations(others), label="other starts")[:players]
    starts_a = [here if s == k else starts[s] for s in range(players)]
    starts_b = [there if s == k else starts[s] for s in range(players)]
    note(f"seat {k} starts on {here} or {there}; the others on {starts_a}")
    # sometimes k has a handicap (7.2): it asks the types of two cells in secret, its own
    # start among them, and may order a new cell once without a wound
    handicap = data.draw(st.booleans(), label="k has a handicap")
    if handicap:
        extra = {**extra, "handicaps": [{"player": k + 1, "cells": 2, "orders": 1}]}
    match_seed = seed.to_bytes(32, "big")
    pair = Pair(rehearsal(plan, players, extra, match_seed), rehearsal(plan, players, extra, match_seed),
                excluded=(k,))
    if handicap:
        also = data.draw(st.sampled_from(sorted(plan.cells)), label="k also asks")
        for asked in ((here, there), (also, also)):
            outcome = pair.step(k, {"type": "ask", "cell": list(asked[0])}, {"type": "ask", "cell": list(asked[1])})
            assert outcome is not None and outcome[0].rejection is None, outcome
    while pair.a.gs.core.phase == "start" and pair.until is None:
        seat = rules.to_act(pair.a.gs.core)
        assert seat is not None
        outcome = pair.step(seat, {"type": "start", "cell": list(starts_a[seat])},
                            {"type": "start", "cell": list(starts_b[seat])})
        assert outcome is not None and outcome[0].rejection is None, outcome
    assert pair.until is None, f"the start cells were told apart in public at step {pair.until}"
    pair.play(data, entries, dark=k)
    pair.finish()
    _events(pair)
    compared = pair.a.steps[:pair.until]
    event(f"handicap: {handicap}; k ordered a cell: "
          f"{any(t.seat == k and t.body.get('type') == 'order' for t in compared)}")
    check_streams(play_both(pair.worlds(), hosted=hosted), pair.cuts(), hosted)


@SETTINGS
@given(**START)
def test_a_start_cell_reaches_only_its_player(
        seed: int, size: tuple[int, int], players: int, extra: dict[str, Any], entries: int,
        data: st.DataObject) -> None:
    a_start_cell(seed, size, players, extra, entries, data)


# --- 3. another player's dark results ------------------------------------------------------------

SAID_AT_THE_END = frozenset({"won_treasure", "won_kill", "draw_treasure_lost", "no_survivor", "survivor",
                             "survivor_failed", "lost_outside", "quiet", "draw_nstop"})
"""What a dark move may let everyone hear that differs: the end of the game (6.7), and the
rounds without a change (3.6, counted in public)."""


DARK = {"seed": st.integers(0, 2**63), "size": sizes, "players": st.integers(2, 4), "extra": game_options,
        "entries": st.integers(0, 30), "semi": st.booleans(), "data": st.data()}


def a_dark_result(seed: int, size: tuple[int, int], players: int, extra: dict[str, Any], entries: int,
                  semi: bool, data: st.DataObject, hosted: Hosted = LAB) -> None:
    """Two worlds whose plans differ in the cell next to seat k's start; on its first turn
    k walks into it in a dark (or semi-dark) move, whose hidden result differs (k picks up
    something in one world only, is carried by a river, falls into a pit, wakes a mite...).
    Nobody else may hear a difference at that move but the end of the game (6.7) or the
    rounds without a change (3.6); then the same random commands, k's mostly dark, and
    every other seat and a spectator receive the same frames until the rules make the
    difference public."""
    plan = draw_plan(seed, players, size)
    k = data.draw(st.integers(0, players - 1), label="k")
    cells = [c for c in sorted(plan.cells) if not isinstance(plan.type_at(c), River)]
    starts = data.draw(st.permutations(cells), label="starts")[:players]
    home = starts[k]
    ways = [d for d in DIRECTIONS if plan.side(home, d) is Side.PASSAGE and step(home, d) not in starts]
    assume(ways)
    direction = data.draw(st.sampled_from(ways), label="k goes")
    target = step(home, direction)
    # what lies there (k picks up something in one world only), or the cell's type (k is
    # carried by a river, falls into a pit, wakes a mite, is healed... in one world only)
    things = data.draw(st.booleans(), label="things lying there, not the type")
    possible = changes(plan, target)
    preferred = [w for w in possible if w[0].startswith("type") != things]
    changed = first_valid(data, preferred, lambda other: accepts(other, players, extra)) or first_valid(
        data, [w for w in possible if w not in preferred], lambda other: accepts(other, players, extra))
    assume(changed is not None)
    assert changed is not None
    how, other = changed
    # k's dark move into `target`: a movement alone, or with actions and conditions, after
    # leaving things behind (a player with three bullets and a landmine picks up neither)
    base = data.draw(st.just(Command(go=direction)) | turn_commands.map(
        lambda c: c if c.kind == "move" else Command(go=direction)), label="move")
    room = data.draw(st.sampled_from([(), (Leave("bullet", 2),), (Leave("landmine"),),
                                      (Leave("bullet", 1), Leave("landmine"))]), label="left first")
    dark = Command(kind="move", before=room + base.before, go=direction, after=base.after, when=base.when,
                   dark=True, tell_wall=semi)
    note(f"seat {k} on {home} goes {direction} into {target}: {how}; {dark}")
    match_seed = seed.to_bytes(32, "big")
    pair = Pair(rehearsal(plan, players, extra, match_seed), rehearsal(other, players, extra, match_seed),
                excluded=(k,))
    for _ in range(players):
        seat = rules.to_act(pair.a.gs.core)
        assert seat is not None
        body = {"type": "start", "cell": list(starts[seat])}
        assert pair.step(seat, body, body) is not None
    assert pair.until is None, f"a cell next to a start was told in public at step {pair.until}"
    while rules.to_act(pair.a.gs.core) != k:  # the others skip until k's turn
        seat = rules.to_act(pair.a.gs.core)
        assert seat is not None
        skip = {"type": "move", "move": "skip"}
        assert pair.step(seat, skip, skip) is not None
        assert pair.until is None
    body = move_body(data, dark)
    outcome = pair.step(k, body, body)
    if outcome is None:  # refused in both (a named target, say): the movement alone
        body = move_body(data, Command(go=direction, dark=True, tell_wall=semi))
        outcome = pair.step(k, body, body)
    assert outcome is not None and outcome[0].rejection is None, outcome
    said = [resolved(o)[0].said for o in outcome]
    # (items lying on a river cell k is carried past, say, change nothing it does)
    assume(said[0] != said[1] or pair.a.gs.core.players[k] != pair.b.gs.core.players[k])
    differ = {e.key for x, y in (said, said[::-1]) for e in x if e not in y}
    event("withheld words that differ: " + (", ".join(sorted(differ)) or "none (k's state does)"))
    if pair.until is not None:
        public = [{e.key for e in s if e.to is None} for s in said]
        assert public[0] ^ public[1] <= SAID_AT_THE_END, (
            f"a dark move is told apart in public: {said[0]} / {said[1]}")
    pair.play(data, entries, dark=k)
    pair.finish()
    _events(pair)
    check_streams(play_both(pair.worlds(), hosted=hosted), pair.cuts(), hosted)


@SETTINGS
@given(**DARK)
def test_a_dark_result_reaches_only_its_player(
        seed: int, size: tuple[int, int], players: int, extra: dict[str, Any], entries: int, semi: bool,
        data: st.DataObject) -> None:
    a_dark_result(seed, size, players, extra, entries, semi, data)


# --- the properties catch a leak -----------------------------------------------------------------


class Leaky:
    """The Labyrinth views, but for the methods a subclass overrides."""

    def __getattr__(self, name: str) -> Any:
        return getattr(views, name)


class SpectatorAudits(Leaky):
    """A spectator is given the full view (the plan, where everyone is)."""

    def view(self, ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        return views.view(ms, Viewer(seat=viewer.seat, full=viewer.full or viewer.seat is None))


class ChoicesShown(Leaky):
    """Everyone is shown the cell a player chose to start on, ordered or asked about."""

    def event(self, ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        out = views.event(ms, event, viewer)
        if out is not None and event.act in views.PRIVATE_BODY:
            out["cell"] = event.body
        return out


class DarkTold(Leaky):
    """What a dark move withholds (said to nobody) is said to everyone."""

    def event(self, ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        out = views.event(ms, event, viewer)
        if out is not None:
            out["said"] = [views.said_view(e) for e in event.said if e.to is None or not e.to or viewer.full
                           or viewer.seat in e.to]
        return out


@pytest.mark.parametrize(("prop", "leak"), [
    pytest.param("cell", SpectatorAudits, id="a cell-spectator audits"),
    pytest.param("start", ChoicesShown, id="a start cell-choices shown"),
    pytest.param("dark", DarkTold, id="a dark result-withheld words told"),
])
def test_the_property_catches_a_leak(prop: str, leak: type[Leaky]) -> None:
    """Each property fails on a projection that leaks what it is about (and so does not
    pass by comparing nothing)."""
    hosted = Hosted(rules=LAB.rules, views=leak())
    properties: dict[str, tuple[dict[str, Any], Callable[..., None]]] = {
        "cell": (CELL, a_cell_nothing_could_reveal), "start": (START, a_start_cell), "dark": (DARK, a_dark_result)}
    strategies, check = properties[prop]

    @settings(max_examples=12, deadline=None, database=None, report_multiple_bugs=False,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(**strategies)
    def run(**drawn: Any) -> None:
        check(**drawn, hosted=hosted)

    with pytest.raises(AssertionError, match="can tell the twin worlds apart"):
        run()

"""Labyrinth: random matches on generated plans keep the rules' invariants."""

from __future__ import annotations

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from domain.games.labyrinth.generate import GenerateOptions, generate
from domain.games.labyrinth.moves import Command
from domain.games.labyrinth.rules import (
    RIVERS,
    CorpseItem,
    Event,
    RuleError,
    State,
    TreasureItem,
    choose_start,
    configure,
    order_cell,
    play,
    say,
    start_game,
)
from domain.games.labyrinth.validate import river_sources
from domain.rng import Rng
from tests.labyrinth.test_moves import commands


def check(state: State) -> None:
    """What holds after every command."""
    assert (state.phase == "over") == (state.outcome is not None)
    sources = set(river_sources(state.plan)) if state.options.rivers != "shallow" else set()
    seen_treasures: list[int] = []
    seen_corpses: list[int] = []
    for p in state.players:
        assert 0 <= p.bullets <= 3 and 0 <= p.grenades <= 3
        if p.wounded or p.infected:
            assert p.bullets == 0
            assert p.carries is None
        if not p.alive:
            assert (p.carries, p.bullets, p.grenades) == (None, 0, 0)
        if p.in_play:
            assert p.cell in state.plan and p.cell not in sources
        if isinstance(p.carries, TreasureItem):
            seen_treasures.append(p.carries.id)
        if isinstance(p.carries, CorpseItem):
            seen_corpses.append(p.carries.seat)
    for cell, pile in state.piles:
        assert cell in state.plan
        assert min(pile.bullets, pile.grenades, pile.landmines, pile.armed) >= 0
        seen_treasures += pile.treasures
        seen_corpses += pile.corpses
    assert len(seen_treasures) == len(set(seen_treasures))
    assert len(seen_corpses) == len(set(seen_corpses))
    assert all(not state.players[s].alive for s in seen_corpses)
    true = state.truth.index(True)
    if state.outcome is None or state.outcome.reason not in ("treasure", "treasure_lost"):
        assert true in seen_treasures


PRIVATE = {"start_cell", "start_rejected", "new_cell", "cell_rejected", "cell_type", "picked"}
"""Answers only their player hears (or, recorded, nobody)."""
SAID_IN_THE_DARK = {
    "move", "dark_done", "semi_wall", "semi_no_wall", "turn", "wounded_may_order", "wounded_no_order",
    "dead", "quiet", "won_treasure", "won_kill", "draw_treasure_lost", "no_survivor", "survivor",
    "survivor_failed", "lost_outside", "draw_nstop",
}
"""What everyone may hear of a dark move: the move, "done", the turn passing, the end."""


def check_audience(events: tuple[Event, ...], dark: bool) -> None:
    for event in events:
        say(event)
        if event.key in PRIVATE:
            assert event.to in ((), (event.seat,)), event
        if dark and event.to is None:
            assert event.key in SAID_IN_THE_DARK, event


@settings(max_examples=30, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(seed=st.integers(0, 10**6), players=st.integers(2, 4), data=st.data())
def test_random_matches_keep_the_invariants(seed: int, players: int, data: st.DataObject) -> None:
    rng = Rng(seed.to_bytes(4, "big"), "setup")
    board = generate(GenerateOptions(rows=4, columns=5, players=players), rng)
    options = configure({"nstop": 8, "shared_starts": data.draw(st.booleans()),
                         "rivers": data.draw(st.sampled_from(RIVERS)),
                         "named_target": data.draw(st.booleans())})
    state, events = start_game(board, players, options, Rng(seed.to_bytes(4, "big"), "order"))
    cells = sorted(board.cells)
    while state.phase == "start":
        seat = next(s for s in state.order if s not in dict(state.choices))
        cell = data.draw(st.sampled_from([c for c in cells if c not in dict(state.refused).get(seat, ())]))
        state, events = choose_start(state, seat, cell)
        check_audience(events, dark=False)
    check(state)
    for _ in range(40):
        if state.phase == "over":
            break
        seat = state.order[state.turn]
        if state.players[seat].may_order and data.draw(st.booleans()):
            ordered, events = order_cell(state, seat, data.draw(st.sampled_from(cells)))
            check_audience(events, dark=False)
            state = ordered
        command: Command = data.draw(commands())
        try:
            new, events = play(state, seat, command)
        except RuleError as exc:
            # the refusals a random command may meet: not a programming error
            assert exc.code in ("outside", "no_such_player", "no_named_target", "name_the_target")
            continue
        check_audience(events, dark=command.dark)
        if command.kind in ("status", "recall"):
            assert new == state
        state = new
        check(state)

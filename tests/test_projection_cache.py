"""Five-Card Trick's view as JSON (`view_json`, what the match core's frames carry) is
the JSON of its view (`view`), byte for byte, whatever parts of it are kept from one
view to the next: for every state of bots' matches of every variant (missed rounds,
replays, items, Blocks that did not resolve), every seat, a spectator and the full view,
asked in an order in which a part kept for one viewer would show up in another's view.
"""

from __future__ import annotations

import msgspec
import pytest

from domain.engine import MatchState
from domain.games import five_card_trick as fct
from projections import five_card_trick as views
from projections.common import ViewEncoder, match_view, project_events
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import hosted
from tests.conformance.checks import play_match

_encode = msgspec.json.Encoder().encode
HOSTED = hosted(fct.name)
VIEWERS = (Viewer(seat=0), Viewer(seat=1), SPECTATOR, AUDITOR, Viewer(seat=1, full=True))


def states(variant: str, seed: int, miss: float = 0.0) -> list[MatchState]:
    return play_match(HOSTED, variant, seed, miss=miss).driver.states


@pytest.mark.parametrize("variant", fct.VARIANT_NAMES)
@pytest.mark.parametrize("seed, miss", [(0, 0.0), (1, 0.3)])
def test_view_json_is_the_json_of_the_view(variant: str, seed: int, miss: float) -> None:
    for ms in states(variant, seed, miss):
        for viewer in (*VIEWERS, *reversed(VIEWERS)):
            assert views.view_json(ms, viewer) == _encode(views.view(ms, viewer)), (ms.seq, viewer)


def test_the_same_values_give_the_same_json_from_other_objects() -> None:
    """Kept parts are found by value (a seat's) or by identity (a resolved round's): a
    state decoded again (equal, not the same objects) gives the same bytes, as does the
    state it was decoded from."""
    for ms in states("final", 2)[::7]:
        again = msgspec.json.decode(msgspec.json.encode(ms.game_state), type=fct.State)
        assert again == ms.game_state and again is not ms.game_state
        copy = msgspec.structs.replace(ms, game_state=again)
        for viewer in VIEWERS:
            assert views.view_json(copy, viewer) == views.view_json(ms, viewer) == _encode(
                views.view(ms, viewer)
            )


def test_the_view_is_a_fresh_dict_each_time() -> None:
    """What `view` returns is the caller's to change: nothing in it is kept."""
    ms = states("dm12", 3)[-5]
    first = views.view(ms, SPECTATOR)
    expected = _encode(first)
    first["terms"]["actions"]["score"] = "changed"
    first["last_round"]["seats"][0]["plays"].clear()
    first["seats"][0]["lights"].append("changed")
    assert _encode(views.view(ms, SPECTATOR)) == expected
    assert views.view_json(ms, SPECTATOR) == expected


def test_the_encoder_uses_the_games_view_json() -> None:
    encoder = ViewEncoder(HOSTED.views)
    for ms in states("setnas-curse", 4)[::3]:
        for viewer in VIEWERS:
            assert encoder.encode(ms, viewer) == _encode(match_view(HOSTED.views, ms, viewer))


def test_matches_asked_for_in_turn_with_room_for_one_kept_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server asks for the updates of several matches in turn (each entry's events and
    views for all its viewers, then another match's): with room for a single kept round
    (`_KEPT`), each match's resolved rounds and views are still its own, byte for byte,
    and no more rounds are kept than there is room for."""
    monkeypatch.setattr(views, "_KEPT", 1)
    views._resolved_kept.clear()
    drivers = [
        play_match(HOSTED, variant, seed, miss=0.2).driver
        for variant, seed in (("dm12", 5), ("final", 6), ("gauntlet", 7))
    ]
    encoders = [ViewEncoder(HOSTED.views) for _ in drivers]
    checked = 0
    for i in range(max(len(d.states) for d in drivers)):
        for d, encoder in zip(drivers, encoders, strict=True):
            if i >= len(d.states):
                continue
            ms, outcome = d.states[i], d.outcomes[i]
            for viewer in VIEWERS:
                events = project_events(HOSTED.views, ms, outcome, viewer)
                assert encoder.events(ms, outcome, viewer) == (_encode(events) if events else None)
                assert encoder.encode(ms, viewer) == _encode(match_view(HOSTED.views, ms, viewer))
                # A live frame's events and view pieces, asked for in one call: the same.
                shown = encoder.update(ms, outcome, viewer, True)
                bare = encoder.update(ms, outcome, viewer, False)
                if not events:
                    assert shown is None and bare is None
                else:
                    assert shown is not None and bare is not None
                    assert shown[0] == bare[0] == _encode(events) and bare[1] is None
                    assert shown[1] == encoder.parts(ms, viewer)
                checked += 1
            assert len(views._resolved_kept) <= 1
    assert checked > 500


def _only_dicts_and_lists(value: object) -> bool:
    if isinstance(value, dict):
        return all(_only_dicts_and_lists(v) for v in value.values())
    if isinstance(value, list):
        return all(_only_dicts_and_lists(v) for v in value)
    return not isinstance(value, tuple | set | frozenset)


def test_views_and_events_are_dicts_and_lists_of_their_own() -> None:
    """The parts only encoded keep the state's tuples; the game's view and events as dicts
    give lists (JSON-ready builtins, the caller's to change), in every state and for
    every viewer."""
    match = play_match(HOSTED, "final", 8, miss=0.2).driver
    for ms, outcome in zip(match.states, match.outcomes, strict=True):
        for viewer in VIEWERS:
            assert _only_dicts_and_lists(views.view(ms, viewer)), (ms.seq, viewer)
            for event in outcome.events:
                assert _only_dicts_and_lists(views.event(ms, event, viewer)), (ms.seq, event, viewer)

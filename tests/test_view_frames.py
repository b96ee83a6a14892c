"""Live update frames, byte for byte: what the match core sends each subscriber for an
entry is the JSON of `{"type": "update", "seq", "ts", "events", "view"}` with the events
and the view built by `project_events` and `match_view` for that viewer and the state
after the entry, whatever shortcuts the core takes to build them (the parts of a view
every viewer shares are encoded once per entry: projections.common.ViewEncoder).

Every registered game: a bots' match (tests/conformance) folded from its log as read
from a store (`MatchCore.receive`, log version 2) and proposed again entry by entry as a
server appends its own (`propose` + `appended`, log version 3: a game that seals keeps a
viewer what it is after the end), with every seat, a spectator and the full view
subscribed.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain import engine
from domain.engine import Entry
from projections.common import ViewEncoder, match_view, project_events
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import Hosted
from server.core import Append, MatchCore, with_receipt
from tests.conformance import hosted_games
from tests.conformance.checks import play_match

_encode = msgspec.json.Encoder().encode
GAMES = hosted_games()


def expected(core: MatchCore[Any], viewer: Viewer, number: int, seq: int) -> bytes:
    ms, outcome = core.at(seq)
    views = core.hosted.views
    return _encode({
        "type": "update", "seq": number, "ts": core.times[seq - 1],
        "events": project_events(views, ms, outcome, viewer), "view": match_view(views, ms, viewer),
    })


def subscribed(core: MatchCore[Any]) -> dict[str, Viewer]:
    viewers = {f"seat {s}": Viewer(seat=s) for s in range(core.current.seats)}
    viewers |= {"spectator": SPECTATOR, "full": AUDITOR}
    for key, viewer in viewers.items():
        core.subscribe(key, viewer, None, {"type": "welcome"})
    return viewers


def check_frames(core: MatchCore[Any], viewers: dict[str, Viewer], sends: list[tuple[str, bytes]],
                 seq: int, numbers: dict[str, int]) -> None:
    for key, frame in sends:
        if b'"type":"receipt"' in frame[:20]:
            continue
        numbers[key] = numbers.get(key, 0) + 1
        body = frame
        if b',"receipt":{' in frame:  # a checkpoint's receipt, appended as the last field
            body = frame[: frame.rindex(b',"receipt":{')] + b"}"
        assert body == expected(core, viewers[key], numbers[key], seq), (key, seq)


def entries_of(hosted: Hosted) -> list[Entry]:
    variant = hosted.rules.variants[0].name
    return play_match(hosted, variant, 0).entries


@pytest.mark.parametrize("game", sorted(GAMES))
def test_frames_of_entries_read_from_a_store(game: str) -> None:
    entries = entries_of(GAMES[game])
    core: MatchCore[str] = MatchCore(entries[0], "1-0", game=GAMES[game])
    viewers = subscribed(core)
    numbers: dict[str, int] = {}
    for i, entry in enumerate(entries[1:], 2):
        folded = core.receive([(f"{i}-0", entry)])
        assert folded.error is None
        check_frames(core, viewers, folded.sends, entry.seq, numbers)
    assert core.current.ended
    assert numbers  # every viewer saw something


@pytest.mark.parametrize("game", sorted(GAMES))
def test_frames_of_entries_a_server_appends(game: str) -> None:
    hosted = GAMES[game]
    entries = entries_of(hosted)
    body = entries[0].body
    first = engine.create_entry(
        hosted.rules, match_id=body["match"], variant=body["variant"], options=body["options"],
        seed=bytes.fromhex(body["seed"]), ts=entries[0].ts, audit_key=b"\x11" * 32,
    )
    assert first.body["log_version"] >= 3
    core: MatchCore[str] = MatchCore(first, "1-0", game=hosted)
    viewers = subscribed(core)
    numbers: dict[str, int] = {}
    for i, entry in enumerate(entries[1:], 2):
        decided = core.propose(kind=entry.kind, seat=entry.seat, body=entry.body, now=entry.ts, cid=entry.cid)
        assert isinstance(decided, Append), (entry, decided)
        _, folded = core.appended(f"{i}-0", decided)
        check_frames(core, viewers, folded.sends, decided.entry.seq, numbers)
    assert core.current.ended


def test_one_encoder_for_states_out_of_order() -> None:
    """The encoder keeps the shared parts of the last state it was given: asked for
    another state (an earlier one, the same one again), it gives that state's bytes."""
    hosted = GAMES["five-card-trick"]
    entries = entries_of(hosted)
    core: MatchCore[str] = MatchCore(entries[0], "1-0", game=hosted)
    core.receive([(f"{i}-0", e) for i, e in enumerate(entries[1:], 2)])
    encoder = ViewEncoder(hosted.views)
    states = list(core.states)
    for seq in (len(states), 1, 2, len(states), len(states) // 2, len(states) // 2, 3):
        ms = states[seq - 1]
        for viewer in (Viewer(seat=0), Viewer(seat=1), SPECTATOR, AUDITOR):
            assert encoder.encode(ms, viewer) == _encode(match_view(hosted.views, ms, viewer))


def test_options_with_a_per_cent_sign_and_no_deadline() -> None:
    """The middle of a match in play is a template with its deadline filled in: text of
    the options that reads as a format is kept as it is, and a deadline may be null."""
    hosted = GAMES["five-card-trick"]
    entries = entries_of(hosted)
    core: MatchCore[str] = MatchCore(entries[0], "1-0", game=hosted)
    core.receive([(f"{i}-0", e) for i, e in enumerate(entries[1:], 2)])
    encoder = ViewEncoder(hosted.views)
    options = {"note": "100% of %d and %b", "%": "%s%%"}
    ms = msgspec.structs.replace(core.states[5], options=options)
    assert ms.started and not ms.ended and ms.rules.deadline(ms.game_state) is not None
    undated = msgspec.structs.replace(
        ms, game_state=msgspec.structs.replace(ms.game_state, deadline=None)
    )
    assert ms.rules.deadline(undated.game_state) is None
    for state in (ms, undated, ms):
        for viewer in (Viewer(seat=0), SPECTATOR):
            assert encoder.encode(state, viewer) == _encode(match_view(hosted.views, state, viewer))
    assert b"100% of %d and %b" in encoder.encode(ms, SPECTATOR)


def test_a_receipt_joined_to_an_update() -> None:
    update = b'{"type":"update","seq":3,"events":[],"view":{"a":"%d"}}'
    receipt = b'{"type":"receipt","sig":"x"}'
    joined = with_receipt(update, receipt)
    assert msgspec.json.decode(joined) == {**msgspec.json.decode(update), "receipt": msgspec.json.decode(receipt)}
    assert with_receipt(None, receipt) == receipt


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_catch_up_is_each_update_with_the_view_now(game: str) -> None:
    hosted = GAMES[game]
    entries = entries_of(hosted)
    core: MatchCore[str] = MatchCore(entries[0], "1-0", game=hosted)
    core.receive([(f"{i}-0", e) for i, e in enumerate(entries[1:], 2)])
    for viewer in (Viewer(seat=0), SPECTATOR, AUDITOR):
        frames = list(core.subscribe(f"late {viewer}", viewer, 0, {"type": "welcome"}).catch_up)
        view = match_view(hosted.views, core.current, viewer)
        wanted = [
            (seq, events) for seq, ms, outcome in core._history(2)
            if (events := project_events(hosted.views, ms, outcome, viewer))
        ]
        assert len(frames) == len(wanted) > 0
        for number, (frame, (seq, events)) in enumerate(zip(frames, wanted, strict=True), 1):
            assert frame == _encode({
                "type": "update", "seq": number, "ts": core.times[seq - 1], "events": events, "view": view,
            })

"""The match core's shortcuts give what the plain way gives (server/core.py): a viewer
followed under several keys gets the same frame under each, a held subscriber gets none,
a receipt is signed once, and only when someone receives it (a welcome carries the one
signed already), and the answers built
without a dataclass's own __init__ behave as frozen dataclasses."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from domain.engine import Outcome
from projections.contract import SPECTATOR, Viewer
from server import keys
from server.core import Append, MatchCore, Submitted
from server.keys import ServerKey
from tests.test_core import GAME, Play

SEAT0, SEAT1 = Viewer(seat=0), Viewer(seat=1)


def key() -> ServerKey:
    return ServerKey(Ed25519PrivateKey.from_private_bytes(b"\x03" * 32))


def played(subscribers: dict[str, Viewer], held: dict[str, Viewer], signed: list[Any]) -> Play:
    """The toy match of tests/test_core.py, with a key that counts what it signs."""

    class Counting(ServerKey):
        def receipt_frames(self, bodies: list[dict[str, Any]]) -> list[bytes]:
            signed.extend(bodies)
            return super().receipt_frames(bodies)

    play = Play()
    play.core = MatchCore(play.log[0], "1-0", game=GAME, key=Counting(key().private))
    for k, viewer in subscribers.items():
        play.core.subscribe(k, viewer, None, {"type": "welcome"})
    for k, viewer in held.items():
        play.core.hold(k, viewer)
    play.seated()
    for _ in range(3):
        play.add(0)
        play.add(1)
    for _ in range(40):
        if play.core.current.ended:
            break
        play.add(0, 3)
        play.add(1, 3)
    assert play.core.current.ended
    return play


def test_a_viewer_under_several_keys_gets_one_frame_and_a_held_one_none() -> None:
    both = played({"a": SEAT0, "b": SEAT0, "s": SPECTATOR}, {"h": SEAT1}, [])
    alone = played({"a": SEAT0, "s": SPECTATOR}, {}, [])
    assert both.sent["a"] == both.sent["b"] == alone.sent["a"]
    assert both.sent["s"] == alone.sent["s"]
    assert "h" not in both.sent
    assert any(b'"receipt":' in f for f in both.sent["a"]), "a player's updates carry receipts"


def test_a_receipt_is_signed_only_for_someone_who_receives_it() -> None:
    signed: list[Any] = []
    play = played({"s": SPECTATOR}, {"h": SEAT0}, signed)
    assert [s["what"] for s in signed] == ["ended"], "a spectator gets the end's receipt alone"
    assert [f for f in play.sent["s"] if b'"receipt"' in f] == play.sent["s"][-1:]
    signed.clear()
    played({}, {"h": SEAT0, "i": SEAT1}, signed)
    assert signed == [], "nobody receives a receipt: none signed"
    players: list[Any] = []
    played({"a": SEAT0}, {}, players)
    assert {s["what"] for s in players} == {"started", "round", "ended"}
    assert len(players) == len({(s["seq"], s["what"]) for s in players}), "each signed once"


def test_answers_are_frozen_dataclasses() -> None:
    outcome = Outcome()
    done = Submitted(3, outcome, False, "ab")
    assert done == Submitted(3, outcome, False, "cd") != Submitted(4, outcome, False, "ab")
    assert Submitted(3, outcome, False).digest == ""
    assert hash(done) == hash(Submitted(3, outcome, False))
    assert repr(done) == f"Submitted(seq=3, outcome={outcome!r}, duplicate=False, digest='ab')"
    assert dataclasses.replace(done, duplicate=True) == Submitted(3, outcome, True)
    assert [f.name for f in dataclasses.fields(done)] == ["seq", "outcome", "duplicate", "digest"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        done.seq = 4  # type: ignore[misc]
    core = Play().seated().core
    decided = Append(core.entry(2), core.current, outcome, "1:x", None)
    assert decided == Append(core.entry(2), core.current, outcome, "1:x", None)
    assert [getattr(decided, f.name) for f in dataclasses.fields(decided)][3:] == [
        "1:x", None, msgspec.json.encode(core.entry(2)),
    ]
    assert dataclasses.replace(decided, seat=1).seat == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        decided.seat = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        Append(core.entry(2), core.current, outcome, "1:x")  # type: ignore[call-arg]


def test_a_welcome_carries_the_receipt_signed_already() -> None:
    signed: list[Any] = []
    play = played({"a": SEAT0}, {}, signed)
    last = json.loads(play.sent["a"][-1])["receipt"]
    count = len(signed)
    for k, viewer in (("again", SEAT0), ("other", SEAT1), ("watcher", SPECTATOR)):
        welcome = json.loads(play.core.subscribe(k, viewer, None, {"type": "welcome"}).welcome)
        assert welcome["receipt"] == last
    assert len(signed) == count, "not signed again"
    welcome = json.loads(play.core.subscribe("b", SEAT0, None, {"type": "welcome"}).welcome)
    welcome["receipt"]["seq"] = 0  # the caller's copy
    assert json.loads(play.core.subscribe("c", SEAT1, None, {"type": "welcome"}).welcome)["receipt"] == last
    created = play.core.creation_receipt()
    assert created is not None and created["what"] == "created" and keys.verify_receipt(created)
    welcome = json.loads(play.core.subscribe("d", SEAT0, None, {"type": "welcome"}).welcome)
    assert play.core.creation_receipt() == created and welcome["receipt"] == last
    assert len(signed) == count + 1, "the creation's signed once, the last checkpoint's kept"

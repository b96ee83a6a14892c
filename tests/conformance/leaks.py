"""The two-worlds leak property, for any game.

A game's projection module supplies `twins(variant, rng)` (projections/contract.py,
`Twins`): two matches with the same public play and a different hidden input. Both are
played through the engine (clients/driver.py), and every viewer's update frames are
built as the server builds them (server/streams.py: each viewer's own numbered stream,
each entry's frame built right after it, as the match runner sends it live). Every seat
not in `tells`, and a spectator, must receive the same stream of both worlds, frame for
frame and byte for byte (which entries send a frame at all included), up to the reveal
(the entry that ends the match) or the step the twins name. The full view, and one of
the seats in `tells` if there are any, must see a difference: the check cannot pass by
comparing two equal matches.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from clients.driver import MatchDriver
from domain.engine import Entry, MatchState, Outcome, Revealed
from domain.rng import Rng
from projections.contract import AUDITOR, SPECTATOR, TWIN_MATCH_ID, Twins, TwinWorld, Viewer
from projections.registry import Hosted
from server.streams import Streams


@dataclass
class Played:
    """A twin world played through the engine. Frames of `entries[:cut]` are compared:
    the create entry, the seat claims (`entries[:joined]`) and the script's steps up to
    the reveal or the twins' `until`."""

    entries: list[Entry]
    outcomes: list[Outcome]
    states: list[MatchState]
    joined: int
    cut: int

    @property
    def commitment(self) -> str:
        value: str = self.entries[0].body["commitment"]
        return value

    def step_of(self, seq: int) -> str:
        """Where log entry `seq` comes from, in words."""
        if seq <= self.joined:
            return f"entry {seq} (create or seat claim)"
        return f"entry {seq} (script step {seq - self.joined - 1})"


def play(hosted: Hosted, variant: str, world: TwinWorld, until: int | None = None) -> Played:
    """Play one twin world; `until`: how many script steps are compared (None: all)."""
    d = MatchDriver(
        hosted, variant=variant, options=world.options, seed=world.seed, ts=world.created,
        match_id=TWIN_MATCH_ID,
    )
    d.seat_all()
    joined = len(d.entries)
    for step in world.script:
        d.propose(step.kind, step.seat, step.body, step.ts)
    cut = len(d.entries) if until is None else joined + until
    revealed = next(
        (i for i, o in enumerate(d.outcomes) if any(isinstance(e, Revealed) for e in o.events)),
        None,
    )
    if revealed is not None:
        cut = min(cut, revealed)
    return Played(list(d.entries), list(d.outcomes), list(d.states), joined, cut)


Stream = list[tuple[int, bytes]]
"""A viewer's frames: (log seq of the entry that sent it, the frame's bytes)."""


def _frames(stream: Stream) -> list[bytes]:
    return [frame for _, frame in stream]


def streams(hosted: Hosted, played: Played, viewers: Mapping[str, Viewer]) -> dict[str, Stream]:
    """Each viewer's frames of the compared entries, as the server sends them live: its
    own numbered stream (server/streams.py), each frame built right after its entry."""
    cut = played.cut
    states, outcomes = played.states[:cut], played.outcomes[:cut]

    def history(first: int) -> Iterator[tuple[int, MatchState, Outcome]]:
        for seq in range(first, cut + 1):
            yield seq, states[seq - 1], outcomes[seq - 1]

    server = Streams(hosted.views, history, [e.ts for e in played.entries[:cut]], lambda: states[-1])
    out: dict[str, Stream] = {label: [] for label in viewers}
    for seq in range(2, cut + 1):
        for label, viewer in viewers.items():
            frame = server.live(viewer, seq, states[seq - 1], outcomes[seq - 1])
            if frame is not None:
                out[label].append((seq, _own_commitment(frame, played.commitment)))
    return out


def _own_commitment(frame: bytes, commitment: str) -> bytes:
    """The frame with its match's commitment written as a placeholder.

    The commitment is the SHA-256 of the secret seed and setup, published when the match
    is created so that the reveal can be checked against it. Twin worlds whose hidden
    setups differ (Memory Maze: a host's maze with one wall more) have different
    commitments by design, and a hash salted with a 32-byte secret seed tells nothing of
    the setup. So the view's `commitment` field is compared as "this world's own
    commitment": it must be the world's commitment, it must appear exactly once, and its
    digits nowhere else in the frame; everything else is compared byte for byte."""
    field = b'"commitment":"' + commitment.encode() + b'"'
    if frame.count(field) != 1 or frame.count(commitment.encode()) != 1:
        raise AssertionError(
            f"a frame carries the match's commitment {frame.count(commitment.encode())} times, "
            f"not once, in the view's 'commitment' field: {frame[:300]!r}"
        )
    return frame.replace(field, b'"commitment":"(this world\'s commitment)"')


def _first_difference(x: Any, y: Any, path: str = "") -> str:
    """Where two decoded frames first differ, as a path and the two values."""
    if isinstance(x, dict) and isinstance(y, dict):
        for key in list(x) + [k for k in y if k not in x]:
            if key not in x or key not in y or x[key] != y[key]:
                if key in x and key in y:
                    return _first_difference(x[key], y[key], f"{path}.{key}")
                return f"{path}.{key}: {x.get(key, '(absent)')!r} vs {y.get(key, '(absent)')!r}"
        return f"{path}: same content, different bytes (key order?)"
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            if u != v:
                return _first_difference(u, v, f"{path}[{i}]")
    return f"{path or '(frame)'}: {x!r} vs {y!r}"


def _compare(
    where: str, label: str, played: tuple[Played, Played], got: tuple[Stream, Stream]
) -> None:
    """AssertionError naming the first frame of `label`'s streams that differs."""
    a, b = got
    if _frames(a) == _frames(b):
        return  # (the entries that sent them may stand at other places of the two logs)
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x[1] != y[1]), None)
    if n is None:  # one stream is a prefix of the other
        n = min(len(a), len(b))
        extra = a[n:] or b[n:]
        world = 1 if a[n:] else 2
        seq = extra[0][0]
        raise AssertionError(
            f"{where}: {label} can tell the twin worlds apart: it receives {len(a)} frames of "
            f"the first and {len(b)} of the second; frame {n + 1} comes only in world {world}, "
            f"from {played[world - 1].step_of(seq)}:\n{extra[0][1].decode()}"
        )
    (seq_a, fa), (seq_b, fb) = a[n], b[n]
    raise AssertionError(
        f"{where}: {label} can tell the twin worlds apart: its frame {n + 1} differs, sent "
        f"for {played[0].step_of(seq_a)} of the first world and {played[1].step_of(seq_b)} "
        f"of the second; first difference at "
        f"{_first_difference(msgspec.json.decode(fa), msgspec.json.decode(fb))}\n"
        f"first:  {fa.decode()}\nsecond: {fb.decode()}"
    )


def check_twins(hosted: Hosted, twins: Twins) -> None:
    """AssertionError unless every viewer outside `twins.tells` (and a spectator) receives
    the same stream in both worlds, and the worlds differ in the full view (and, when
    `tells` names seats, for one of them)."""
    game, variant = hosted.rules.name, twins.variant
    where = f"{game} {variant}"
    until = twins.until or (None, None)
    played = (
        play(hosted, variant, twins.worlds[0], until[0]),
        play(hosted, variant, twins.worlds[1], until[1]),
    )
    options = [p.entries[0].body["options"] for p in played]
    if options[0] != options[1]:
        raise AssertionError(f"{where}: the twin worlds' public options differ: {options}")
    seats = played[0].states[0].seats
    blind = {f"seat {s}": Viewer(seat=s) for s in range(seats) if s not in twins.tells}
    blind["spectator"] = SPECTATOR
    viewers = {**blind, "the full view": AUDITOR}
    got = (streams(hosted, played[0], viewers), streams(hosted, played[1], viewers))
    for label in blind:
        _compare(where, label, played, (got[0][label], got[1][label]))
    compared = f"{played[0].cut} and {played[1].cut} entries compared"
    if _frames(got[0]["the full view"]) == _frames(got[1]["the full view"]):
        raise AssertionError(
            f"{where}: the twin worlds are the same in the full view ({compared}): "
            f"the check would prove nothing"
        )
    for s in twins.tells:  # one of them must tell (looked at one by one: streams cost)
        one = {f"seat {s}": Viewer(seat=s)}
        if _frames(streams(hosted, played[0], one)[f"seat {s}"]) != _frames(
            streams(hosted, played[1], one)[f"seat {s}"]
        ):
            break
    else:
        if twins.tells:
            raise AssertionError(
                f"{where}: none of the seats {list(twins.tells)}, whose hidden input differs, "
                f"can tell the twin worlds apart ({compared}): the check would prove nothing"
            )


def twins_of(hosted: Hosted, variant: str, seed: int) -> Twins:
    """The game's twin worlds of `variant` drawn from the integer `seed`."""
    twins = hosted.views.twins(variant, Rng(str(seed).encode(), "twins"))
    if twins.variant != variant:
        raise AssertionError(f"{hosted.rules.name}: twins of {variant!r} are of {twins.variant!r}")
    return twins


def check_no_leak(hosted: Hosted, variant: str, seed: int) -> None:
    """The two-worlds leak property for one seed: see the module docstring."""
    check_twins(hosted, twins_of(hosted, variant, seed))

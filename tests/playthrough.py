"""Scripted matches of every hosted game, and what every viewer receives of them.

Used by the golden playthroughs (tests/test_golden.py, tests/golden/) and the property
tests (tests/test_properties.py). A playthrough is a function that plays one match
through the engine (`domain.engine.propose`): a fixed match id, seed, options and
timestamps, commands written out in the script, and where bots finish a match, bots with
seeded `random.Random` generators. So the same script gives the same log, byte for byte.

What a viewer receives is built by the server's own code: a `server.hub.MatchRunner`
folds the log entry by entry (as it does when it tails the stream) and its `streams`
(server/streams.py) give each viewer's update frame of each entry right after it (live),
and each viewer's whole stream caught up from its start once the match is over. The
viewers are every seat, a spectator and the full (auditor) view. `runner_for` and `feed`
are the only functions here that touch the server's internals.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from clients.bots import BOTS, Bot
from domain import engine
from domain.engine import Entry, MatchState
from projections.common import match_view
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import hosted
from server.hub import MatchRunner
from tests.fct_helpers import FctMatch
from tests.match_driver import MatchDriver


def viewers_of(seats: int) -> dict[str, Viewer]:
    """The viewers a playthrough is shown to, by label: every seat, a spectator, and the
    full (auditor) view."""
    viewers: dict[str, Viewer] = {f"seat {s}": Viewer(seat=s) for s in range(seats)}
    viewers["spectator"] = SPECTATOR
    viewers["full"] = AUDITOR
    return viewers


# The viewers of a two-seat match (Five-Card Trick, Memory Maze), by label.
VIEWERS: Mapping[str, Viewer] = viewers_of(2)

# 2024-11-22 00:00:00 UTC: every scripted match starts here.
T0 = 1_732_233_600_000


# --- what viewers receive, through the server's MatchRunner ----------------------------


class _NoStore:
    async def mark_over(self, match_id: str) -> None:
        return None


class _NoHub:
    """Just enough of server.hub.Hub for a MatchRunner that is never started."""

    def __init__(self) -> None:
        self.store = _NoStore()
        self.settings = None

    def spawn(self, coro: Any) -> None:
        coro.close()  # marking the match over in a store: there is no store


def runner_for(first: Entry) -> MatchRunner:
    """A MatchRunner holding only the create entry; fold the rest with `feed`."""
    hub: Any = _NoHub()
    return MatchRunner(hub, first.body["match"], [(f"{first.seq}-0", first)])


def feed(runner: MatchRunner, entry: Entry) -> None:
    """Fold one entry into the runner as its tail does (without broadcasting)."""
    runner._fold(f"{entry.seq}-0", entry, broadcast=False)


@dataclass
class Received:
    """What each viewer (by label) receives of a match's log."""

    live: dict[str, list[bytes | None]]  # one item per entry: the frame sent right after it
    after: dict[str, list[bytes]]  # the whole stream, caught up from 0 once it is over
    states: list[MatchState]  # the state after each entry

    def live_at(self, label: str, seq: int) -> bytes | None:
        return self.live[label][seq - 1]


def received(entries: Sequence[Entry], viewers: Mapping[str, Viewer] | None = None) -> Received:
    """What each viewer receives of each entry of the log (see the module docstring);
    by default every viewer of `viewers_of` the match's seat count."""
    runner = runner_for(entries[0])
    if viewers is None:
        viewers = viewers_of(runner.current.seats)
    live: dict[str, list[bytes | None]] = {label: [None] for label in viewers}
    for entry in entries[1:]:
        feed(runner, entry)
        for label, viewer in viewers.items():
            live[label].append(
                runner.streams.live(viewer, entry.seq, runner.current, runner.outcomes[-1])
            )
    after = {label: runner.streams.backlog(viewer, 0) for label, viewer in viewers.items()}
    return Received(live=live, after=after, states=list(runner.states))


# --- scripted matches of any game --------------------------------------------------------


class Scripted(MatchDriver):
    """A match whose clock moves `step_ms` for every entry unless a time is given.

    A subclass sets `step_ms` before the driver's constructor seats the players."""

    step_ms: int = 1_000

    def propose(
        self, kind: Any, seat: int | None, body: Any, ts: int | None = None
    ) -> engine.Outcome:
        return super().propose(kind, seat, body, self.ts + self.step_ms if ts is None else ts)

    def tick_at_deadline(self, late_ms: int = 0) -> engine.Outcome:
        """The server's tick for the current deadline (`late_ms` after it)."""
        due = engine.deadline(self.ms)
        assert due is not None, "nothing is waiting on time"
        return self.propose("tick", None, {"deadline": due}, due + late_ms)

    def bot_acts(self, seat: int, bot: Bot) -> bool:
        """The bot sends what it wants to send now, seeing only its seat's view; whether
        it sent anything. It stops at its first refused command."""
        views = hosted(self.ms.game).views
        acted = False
        for command in bot.act(match_view(views, self.ms, Viewer(seat=seat))):
            out = self.propose("command", seat, command)
            rejection = out.rejection
            code = rejection.code if rejection else None
            bot.feedback(command, rejection is None, out.warnings, code)
            acted = True
            if rejection is not None:
                break
        return acted

    def bots_to_the_end(self, bots: Sequence[Bot]) -> None:
        """Seated bots play on from the state reached, each from its seat's view only;
        when no bot has anything to send, the deadline's tick comes."""
        while not self.ms.ended:
            acted = False
            for seat, bot in enumerate(bots):
                if self.ms.ended:
                    break
                acted = self.bot_acts(seat, bot) or acted
            if not acted and not self.ms.ended:
                self.tick_at_deadline()
            if len(self.entries) > 2_000:
                raise RuntimeError("no end after 2000 entries")


def bot_of(game: str, name: str, seed: int) -> Bot:
    return BOTS[game][name](random.Random(seed))


# --- Five-Card Trick ---------------------------------------------------------------------


class Script(Scripted, FctMatch):
    """A Five-Card Trick match, scripted."""

    def __init__(
        self,
        variant: str,
        *,
        match_id: str,
        names: tuple[str, str] = ("Black", "White"),
        step_ms: int = 1_000,
        ts: int = T0,
        **options: Any,
    ) -> None:
        self.step_ms = step_ms
        super().__init__(variant, names=names, ts=ts, match_id=match_id, **options)


def bot(name: str, seed: int) -> Bot:
    """A Five-Card Trick bot."""
    return bot_of("five-card-trick", name, seed)


def dm12_black_white() -> Script:
    """dm12: the Black/White example's four rounds (with a resubmission, a stale round, a
    junk command and a missed deadline around them), then bots to the end."""
    m = Script("dm12", match_id="golden-dm12")
    # R1: Black first sends Score+Claim, then replaces it with Score+Grow.
    m.submit(0, ["score", "claim"])
    m.submit(0, ["score", "grow"])
    m.submit(1, ["score", "steal"])
    # R2: White names round 1 (stale), then Claim+Block(Claim); Black Score+Steal.
    assert m.submit(1, ["claim", "block"], block="claim", round=1).rejection is not None
    m.submit(1, ["claim", "block"], block="claim")
    m.submit(0, ["score", "steal"])
    # R3: Black's Score is third in a row (disregarded), its Claim blocked.
    m.submit(0, ["score", "claim"])
    assert m.propose("command", 0, {"type": "dance"}).rejection is not None
    m.submit(1, ["grow", "claim"])
    # R4: Black Score+Claim takes the pot of 3; White Grow+Block(Score).
    m.submit(1, ["grow", "block"], block="score")
    m.submit(0, ["score", "claim"])
    assert m.chips() == (7, 1)
    # R5: Black is blocked from Score; White misses the round (the deadline's tick).
    m.submit(0, ["grow", "claim"])
    m.tick_at_deadline(late_ms=3)
    assert m.gs.round == 6
    m.bots_to_the_end([bot("heuristic", 12), bot("random", 34)])
    return m


def gauntlet_double_miss() -> Script:
    """gauntlet: the EC/DMO example with round 2 missed by both players twice (replayed
    twice), a resubmission, a command that arrives after its round's deadline, and a last
    round both players miss until the replays run out and the match is abandoned."""
    m = Script("gauntlet", match_id="golden-gauntlet", names=("EC", "DMO"), rounds=6, max_replays=2)
    m.submit(0, ["score", "grow"])
    m.submit(1, ["score", "block"], block="block")
    # R2: both miss: replayed twice (the second tick comes late), then played.
    m.tick_at_deadline()
    m.tick_at_deadline(late_ms=250)
    assert m.gs.replays == 2
    m.submit(0, ["claim", "steal"])
    m.submit(0, ["claim", "block"], block="score")  # EC changes its mind
    m.submit(1, ["steal", "block"], block="claim")
    # R3
    m.submit(0, ["claim", "steal"])
    m.submit(1, ["score", "steal"])
    # R4: EC submits; the DMO's submission arrives 40 ms after the deadline: the round
    # has closed (a miss for the DMO) and round 5 is in play, so it is stale.
    m.submit(0, ["grow", "score"])
    due = engine.deadline(m.ms)
    assert due is not None
    assert m.submit(1, ["claim", "block"], block="grow", round=4, ts=due + 40).rejection is not None
    assert m.gs.round == 5
    # R5
    m.submit(1, ["score", "grow"])
    m.submit(0, ["claim", "steal"])
    # R6: nobody plays; after two replays the match is abandoned and scored.
    while not m.ms.ended:
        m.tick_at_deadline()
    assert m.gs.replays == 2
    return m


def final_items() -> Script:
    """final: Overload, Claim Priority after a tied Claim (refused before), Limit Reset,
    doubled cards, colliding Blocks whose targets stay hidden, then missed rounds through
    the extensions to a tie decided by unused items."""
    m = Script(
        "final", match_id="golden-final", step_ms=1_500, rounds=3, extension=1, max_rounds=5,
        items=[["overload", "limit_reset"], ["claim_priority", "limit_reset"]],
    )
    # R1: Black overloads Claim+Score+Grow; White Claim+Block(Score): the Claims tie.
    assert m.use_item(1, "claim_priority").rejection is not None  # not eligible yet
    m.submit(0, ["claim", "score", "grow"], items=["overload"])
    m.submit(1, ["claim", "block"], block="score")
    assert m.gs.seats[1].priority
    # R2: White takes the pot with Claim Priority; the clock restarts.
    assert m.use_item(1, "claim_priority").rejection is None
    assert m.use_item(0, "claim_priority").rejection is not None  # not held
    assert m.submit(0, ["steal", "steal", "grow"], items=["overload"]).rejection is not None  # used
    m.submit(0, ["steal", "steal"])
    m.submit(1, ["claim", "block"], block="steal", items=["limit_reset"])
    # R3: Black's doubled Steal is disregarded; both Blocks collide (targets hidden).
    m.submit(1, ["score", "block"], block="grow")
    m.submit(0, ["steal", "block"], block="claim")
    assert m.chips() == (3, 3)
    # Then both miss every round: extended to 4, to 5, then the unused items decide.
    while not m.ms.ended:
        m.tick_at_deadline()
    assert m.ms.result is not None and m.ms.result.winner == 0
    return m


def setnas_curse() -> Script:
    """setnas-curse: the Grunkle/Shaun edition of the example under its own names (any
    case), a Block named by display name, then bots to the end of a short match."""
    m = Script(
        "setnas-curse", match_id="golden-setnas", names=("Grunkle", "Shaun"), rounds=6, max_rounds=8
    )
    m.submit(0, ["Score", "Raise"])
    m.submit(1, ["score", "STEAL"])
    m.submit(0, ["score", "steal"])
    assert m.submit(1, ["claim", "grow", "block"]).rejection is not None  # three abilities
    m.submit(1, ["Claim", "Block"], block="Claim")
    m.submit(0, ["score", "claim"])
    m.submit(1, ["raise", "claim"])
    m.submit(0, ["score", "claim"])
    m.submit(1, ["raise", "block"], block="score")
    m.bots_to_the_end([bot("random", 5), bot("heuristic", 6)])
    return m


# --- the playthroughs ----------------------------------------------------------------------

Playthrough = Callable[[], Scripted]

# Five-Card Trick's playthroughs (tests/test_properties.py also replays these, with its
# rules and its two seats).
PLAYTHROUGHS: Mapping[str, Callable[[], Script]] = {
    "dm12-black-white": dm12_black_white,
    "gauntlet-double-miss": gauntlet_double_miss,
    "final-items": final_items,
    "setnas-curse": setnas_curse,
}

# Every game's playthroughs, by game and name.
PLAYTHROUGHS_OF: Mapping[str, Mapping[str, Playthrough]] = {
    "five-card-trick": PLAYTHROUGHS,
}

# Every playthrough, by name: each has its golden file, tests/golden/NAME.json.
ALL_PLAYTHROUGHS: Mapping[str, Playthrough] = {
    name: play for plays in PLAYTHROUGHS_OF.values() for name, play in plays.items()
}


# --- the golden file -------------------------------------------------------------------

_encode = msgspec.json.Encoder().encode


def _line(value: Any) -> bytes:
    return value if isinstance(value, bytes) else _encode(value)


def golden_document(name: str) -> bytes:
    """The golden file of a playthrough: valid JSON, one line per item, each viewer's
    frame exactly as the server sends it (null when it sends nothing)."""
    m = ALL_PLAYTHROUGHS[name]()
    viewers = viewers_of(m.ms.seats)
    got = received(m.entries, viewers)
    first = m.entries[0].body
    header = {
        "playthrough": name,
        "description": " ".join((ALL_PLAYTHROUGHS[name].__doc__ or "").split()),
        "game": first["game"],
        "variant": first["variant"],
        "match": first["match"],
        "seed": first["seed"],
        "options": first["options"],
        "viewers": {label: msgspec.to_builtins(v) for label, v in viewers.items()},
        "entries_count": len(m.entries),
        "head": m.ms.head,
        "result": msgspec.to_builtins(m.ms.result),
    }
    out = [b"{"]
    for key, value in header.items():
        out.append(b' "' + key.encode() + b'": ' + _line(value) + b",")
    out.append(b' "entries": [')
    for i, (entry, outcome) in enumerate(zip(m.entries, m.outcomes, strict=True)):
        rejection = outcome.rejection
        answer = {
            "rejection": f"{rejection.code}: {rejection.reason}" if rejection else None,
            "warnings": list(outcome.warnings),
        }
        out.append(b"  {")
        out.append(b'   "entry": ' + _line(msgspec.to_builtins(entry)) + b",")
        out.append(b'   "answer": ' + _line(answer) + b",")
        labels = list(viewers)
        for j, label in enumerate(labels):
            frame = got.live[label][i]
            sep = b"," if j < len(labels) - 1 else b""
            shown = frame if frame is not None else b"null"
            out.append(b'   "' + label.encode() + b'": ' + shown + sep)
        out.append(b"  }" + (b"," if i < len(m.entries) - 1 else b""))
    out.append(b" ]")
    out.append(b"}")
    return b"\n".join(out) + b"\n"

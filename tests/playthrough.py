"""Scripted matches of every hosted game, and what every viewer receives of them.

Used by the golden playthroughs (tests/test_golden.py, tests/golden/) and the property
tests (tests/test_properties.py). A playthrough is a function that plays one match
through the engine (`domain.engine.propose`): a fixed match id, seed, options and
timestamps, commands written out in the script, and where bots finish a match, bots with
seeded `random.Random` generators. So the same script gives the same log, byte for byte.

What a viewer receives is built by the server's own code: a `server.hub.MatchRunner`
folds the log entry by entry in its core (server/core.py), as it does when it tails the
stream, and its `streams` (server/streams.py) give each viewer's update frame of each
entry right after it (live), and each viewer's whole stream caught up from its start
once the match is over. The viewers are every seat, a spectator and the full (auditor)
view. `runner_for` and `feed` are the only functions here that touch the server's
internals.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from clients.bots import BOTS, Bot, lineup
from domain import engine
from domain.engine import Entry, MatchState, Outcome
from domain.games import keys_to_success as kts
from domain.games import memory_maze as mm
from domain.games.labyrinth import game as labyrinth
from domain.games.labyrinth import rules as lab_rules
from domain.games.memory_maze import Moved
from domain.games.memory_maze.maze import (
    DIRECTION_WORDS,
    DIRECTIONS,
    Cell,
    Maze,
    edge_between,
    step,
)
from projections.common import match_view
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import hosted
from server.hub import MatchRunner
from tests.conformance import hosted_games
from tests.conformance.checks import Drowsy
from tests.fct_helpers import SEED, FctMatch
from tests.kts_helpers import KtsMatch
from tests.match_driver import MatchDriver
from tests.mm_helpers import MmMatch, drawing
from tests.mm_helpers import maze as drawn_maze


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
        self.receipts = None  # no receipts

    def spawn(self, coro: Any) -> None:
        coro.close()  # marking the match over in a store: there is no store


def runner_for(first: Entry) -> MatchRunner:
    """A MatchRunner holding only the create entry; fold the rest with `feed`."""
    hub: Any = _NoHub()
    return MatchRunner(hub, first.body["match"], [(f"{first.seq}-0", first)])


def feed(runner: MatchRunner, entry: Entry) -> None:
    """Fold one entry into the runner's core as its tail does (with nobody subscribed,
    nothing is sent)."""
    folded = runner.core.receive([(f"{entry.seq}-0", entry)])
    if folded.error is not None:
        raise folded.error


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
    # The golden files are logs of the first log version (the setup drawn from the seed
    # alone, at creation): they keep showing that such logs fold and show what they did.
    log_version = 1

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


# --- Memory Maze -------------------------------------------------------------------------


class MazeScript(Scripted, MmMatch):
    """A Memory Maze match, scripted (MmMatch's commands, the playthrough's match id).

    The script knows the maze (it is in the state), so it can send a sequence that
    succeeds or one that bonks where it wants to: `route`, `into_wall`, `guide`."""

    def __init__(
        self,
        variant: str,
        *,
        match_id: str,
        names: tuple[str, str] = ("Ann", "Bob"),
        step_ms: int = 1_000,
        ts: int = T0,
        **options: Any,
    ) -> None:
        self.step_ms = step_ms
        if isinstance(options.get("maze"), Maze):
            options["maze"] = drawing(options["maze"])
        MatchDriver.__init__(
            self, mm, variant=variant, names=names, ts=ts, match_id=match_id, seed=SEED,
            options=options,
        )

    def _paths(self, seat: int) -> tuple[dict[Cell, str], frozenset[int]]:
        """The shortest sequence to every cell the seat can reach from where it stands
        (moves tried in the order U, D, L, R), and the borders it cannot cross."""
        gs = self.gs
        me = gs.seats[seat]
        blocked = gs.maze.blocked_for(me.letter)
        paths = {me.pos: ""}
        todo = deque([me.pos])
        while todo:
            here = todo.popleft()
            for move in DIRECTIONS:
                there = step(here, move)
                edge = edge_between(here, there, gs.maze.size)
                if edge is None or edge in blocked or there in paths:
                    continue
                paths[there] = paths[here] + move
                todo.append(there)
        return paths, blocked

    def route(self, seat: int, goal: Cell) -> str:
        """The shortest sequence that takes the seat to `goal` without a bonk."""
        return self._paths(seat)[0][goal]

    def into_wall(self, seat: int, walls: frozenset[int] | None = None) -> str:
        """The shortest sequence whose last move crosses one of `walls` (default: the
        inner walls the seat cannot pass, so that it bonks on its last move; the seat's
        own colored walls: so that it passes one)."""
        paths, blocked = self._paths(seat)
        aim = blocked if walls is None else walls
        n = self.gs.maze.size
        for cell, path in sorted(paths.items(), key=lambda item: (len(item[1]), item[1])):
            for move in DIRECTIONS:
                if edge_between(cell, step(cell, move), n) in aim:
                    return path + move
        raise AssertionError("no such wall within reach")

    def guide(self, seat: int) -> str:
        """Towards the nearest target the seat still needs (or home once it has them
        all), as far as one submission may go."""
        me = self.gs.seats[seat]
        paths, _ = self._paths(seat)
        needed = [t for t in me.targets if t not in me.visited] or [me.start]
        goal = min(needed, key=lambda t: (len(paths[t]), t))
        return paths[goal][: self.gs.options.max_moves]

    def take_turns(self, guided: int, opponent: Bot) -> None:
        """Turn editions: the `guided` seat follows `guide`, the other seat is a bot; a
        turn the bot lets pass runs out on the clock."""
        while not self.ms.ended:
            seat = self.gs.to_move
            if seat == guided:
                self.ok(seat, self.guide(seat))
            elif seat is not None and not self.bot_acts(seat, opponent):
                self.tick_at_deadline()
            if len(self.entries) > 500:
                raise RuntimeError("no end after 500 entries")

    def race(self, guided: int, opponent: Bot) -> None:
        """crazy: the `guided` seat follows `guide` as soon as its wait is over, the other
        seat is a bot; when nobody may submit, the clock runs to the end of a wait."""
        while not self.ms.ended:
            acted = False
            for seat in (0, 1):
                if self.ms.ended or not self.gs.seats[seat].ready:
                    continue
                if seat == guided:
                    self.ok(seat, self.guide(seat))
                    acted = True
                else:
                    acted = self.bot_acts(seat, opponent) or acted
            if not acted and not self.ms.ended:
                self.tick_at_deadline()
            if len(self.entries) > 500:
                raise RuntimeError("no end after 500 entries")


def words(moves: str) -> str:
    """A sequence written out in words (`up up right`)."""
    return " ".join(DIRECTION_WORDS[m] for m in moves)


def moved(out: Outcome) -> Moved:
    """The one attempt an accepted command or a tick made."""
    found = [e for e in out.events if isinstance(e, Moved)]
    assert len(found) == 1, out.events
    return found[0]


def mm_bot(name: str, seed: int) -> Bot:
    return bot_of("memory-maze", name, seed)


def black_garnet_periods() -> MazeScript:
    """black-garnet (a seeded maze, two periods each): refused sequences, a bonk written
    in words, a success that visits a corner, a period spent before a move, a turn that
    runs through both periods to a timed-out pass, then Ann guided to her win against the
    explorer bot."""
    m = MazeScript("black-garnet", match_id="golden-black-garnet", periods=2)
    assert m.move(0, "up north").rejection is not None  # two styles in one sequence
    assert m.move(1, "U").rejection is not None  # not Bob's turn
    bonk = moved(m.move(0, words(m.into_wall(0))))
    assert bonk.bonked
    assert m.move(1, "U", turn=m.gs.turn - 1).rejection is not None  # a stale turn
    success = m.ok(1, m.guide(1))
    assert not success.bonked and success.collected
    # Ann thinks past her 60 s: a period is spent; she moves 30 s into the next minute.
    spent = m.tick_at_deadline()
    assert m.gs.seats[0].periods == 1 and spent.events
    due = engine.deadline(m.ms)
    assert due is not None
    assert not m.ok(0, m.guide(0), ts=due - 30_000).bonked
    # Bob lets his turn run: both periods, then the turn is a pass.
    m.tick_at_deadline()
    m.tick_at_deadline(late_ms=7)
    timed_out = moved(m.tick_at_deadline())
    assert timed_out.timed_out and timed_out.moves == "" and m.gs.seats[1].periods == 0
    m.take_turns(0, mm_bot("explorer", 8))
    assert m.ms.result is not None and m.ms.result.winner == 0
    return m


HOST_MAZE = drawn_maze(
    "black-garnet", [("a3", "a4"), ("b5", "c5"), ("c3", "d3"), ("c4", "c5"), ("f6", "f7")]
)


def minos_reserve() -> MazeScript:
    """minos on a host's maze (the option `maze`: secret, so not among the recorded
    options, only in the committed setup), a 90 s reserve: refused sequences (too long,
    not the player's turn, a stale turn), Ann guided from key to key, Bob spending part
    of his reserve on a bonk, then running out of it (zero moves) and missing a bare
    minute (zero moves again); Ann passes once, and Bob plays on as the random bot."""
    m = MazeScript("minos", match_id="golden-minos", maze=HOST_MAZE, reserve_seconds=90)
    assert m.entries[0].body["options"]["maze"] is None
    assert m.entries[0].body["setup"]["source"] == "host"
    assert m.move(0, "U" * 11).rejection is not None  # 10 moves at most
    m.ok(0, m.guide(0))
    assert m.move(0, "R").rejection is not None  # not Ann's turn
    # Bob takes 100 s: 40 s of it from his reserve; he bonks.
    started = m.gs.turn_started
    assert started is not None
    assert moved(m.move(1, m.into_wall(1), ts=started + 100_000)).bonked
    assert m.gs.seats[1].reserve == 50_000
    assert m.move(0, "U", turn=m.gs.turn - 1).rejection is not None  # a stale turn
    m.ok(0, m.guide(0))
    # Bob's minute and his last 50 s run out: zero moves, and the reserve is gone.
    out = moved(m.tick_at_deadline())
    assert out.timed_out and out.reserve_left == 0
    m.ok(0, m.guide(0))
    # Now a move has its minute only: Bob misses it, by 20 ms.
    assert moved(m.tick_at_deadline(late_ms=20)).timed_out
    assert m.ok(0, "").moves == ""  # Ann passes
    m.take_turns(0, mm_bot("random", 21))
    assert m.ms.result is not None and m.ms.result.winner == 0
    assert m.gs.seats[0].visited == m.gs.seats[0].targets
    return m


def crazy_cooldowns() -> MazeScript:
    """crazy (a seeded maze with three pairs of colored walls): both players at once, a
    success and a bonk, submissions discarded during the waits, refused ones (empty, with
    a turn), the end of a wait on the clock, Ann through her own colored wall and Bob
    bonking on it, then Ann guided corner to corner against the random bot."""
    m = MazeScript("crazy", match_id="golden-crazy", names=("Whims", "Wimp"))
    maze = m.gs.maze
    assert maze.colored_a and maze.colored_b
    assert m.move(0, "  ").rejection is not None  # no moves
    assert m.move(1, "U", turn=1).rejection is not None  # no turns in crazy
    assert not m.ok(0, m.guide(0)).bonked
    assert m.ok(1, m.into_wall(1)).bonked
    assert m.move(0, "R").rejection is not None  # waiting after a success: discarded
    assert m.move(1, "L", ts=m.ts + 20_000).rejection is not None  # after a bonk
    m.tick_at_deadline()  # Whims may move again
    assert m.gs.seats[0].ready and not m.gs.seats[1].ready
    assert not m.ok(0, m.into_wall(0, maze.colored_a)).bonked  # her own: she passes
    m.tick_at_deadline()  # and Wimp
    assert m.ok(1, m.into_wall(1, maze.colored_a)).bonked  # Whims's wall
    m.race(0, mm_bot("random", 3))
    assert m.ms.result is not None and m.ms.result.winner == 0
    return m


# --- Keys to Success / Gatekeeping ---------------------------------------------------------


class KeysScript(Scripted, KtsMatch):
    """A Keys to Success (or Gatekeeping) match, scripted."""

    def __init__(
        self,
        variant: str,
        *,
        match_id: str,
        names: Sequence[str],
        step_ms: int = 1_000,
        ts: int = T0,
        **options: Any,
    ) -> None:
        self.step_ms = step_ms
        super().__init__(variant, names=tuple(names), ts=ts, match_id=match_id, seed=SEED, **options)

    def entered(self, out: Outcome) -> dict[int, str | None]:
        """Who went through which gate in the round an outcome resolved."""
        [resolved] = [e for e in out.events if isinstance(e, kts.RoundResolved)]
        return {p.seat: p.entered for p in resolved.plays}


def keys_to_success_vote() -> KeysScript:
    """keys-to-success, five seats, two rooms (doors A B C, then D E): chat in a room, a
    refused and a replaced submission, a missed deadline (Eve's default play: her lowest
    key-card at the rightmost door), a door closed after a garnet, chat in the escaped
    room, the end of play (nobody inside holds a card), then the Elimination Candidate
    vote: a refused vote, chat on the open channel, a vote changed, and the window
    running out with one vote cast."""
    m = KeysScript(
        "keys-to-success", match_id="golden-keys", names=("Ada", "Ben", "Cleo", "Dev", "Eve"),
        seats=5, layout="A:open B:pass C:garnet\nD:open E:garnet", round_seconds=60,
        vote_seconds=600,
    )
    # Round 1: everyone in Room 1.
    assert m.chat(0, "I take A. Ben, B?").rejection is None
    assert m.submit(0, "A", [1]).rejection is None
    assert m.submit(2, "A C", [1]).rejection is not None  # not adjacent
    assert m.submit(2, "B", [2]).rejection is None
    assert m.submit(2, "b", [1]).rejection is None  # replaced
    assert m.submit(1, "B", [2]).rejection is None
    assert m.submit(3, "C", [1, 1]).rejection is None
    out = m.tick_at_deadline()  # Eve missed it: 1 at C
    assert m.entered(out) == {0: "A", 1: "B", 2: None, 3: "C", 4: None}
    # Round 2: Ada, Ben, Dev in Room 2; Cleo and Eve in Room 1 (C closed this round).
    assert m.chat(1, "Ada, D is yours; I take E").rejection is None
    assert m.chat(4, "Cleo, A?").rejection is None
    assert m.submit(4, "C", [2]).rejection is not None  # closed this round
    assert m.submit(4, "A", [2]).rejection is None
    assert m.submit(2, "A", [3]).rejection is None
    assert m.submit(0, "D", [2]).rejection is None
    assert m.submit(1, "E", [1]).rejection is None
    out = m.submit(3, "D", [1])  # the last one awaited: the round closes
    assert m.entered(out) == {0: "D", 1: "E", 2: "A", 3: None, 4: None}
    # Round 3: Ada and Ben escaped; Cleo and Dev in Room 2, Eve in Room 1: all in.
    assert m.chat(0, "we are out").rejection is None
    assert m.submit(2, "D", m.gs.players[2].hand).rejection is None
    assert m.submit(4, "A", m.gs.players[4].hand).rejection is None
    out = m.submit(3, "D", m.gs.players[3].hand)
    assert m.entered(out) == {2: None, 3: "D", 4: "A"}
    ended = m.gs.ended
    assert ended is not None and ended.reason == "no_cards"
    assert ended.winners == (0, 1) and ended.losers == (2, 4)
    # The vote.
    assert m.vote(2, 4).rejection is not None  # not a winner
    assert m.chat(4, "please not me").rejection is None
    assert m.vote(0, 2).rejection is None
    assert m.vote(0, 4).rejection is None  # changed
    assert m.vote(1, 3).rejection is not None  # not a loser
    m.tick_at_deadline()
    over = m.gs.finished
    assert over is not None and over.ec == 4 and over.ec_by == "vote" and m.ms.ended
    return m


def gatekeeping_bots() -> KeysScript:
    """gatekeeping, four seats, two levels: a round with chat, a refused weapon and a
    player who misses the deadline, then three heuristic bots (who claim gates in their
    level's chat) and a random bot to the end: three escape, and the one left behind is
    the Elimination Candidate."""
    m = KeysScript(
        "gatekeeping", match_id="golden-gatekeeping", names=("Ike", "Jo", "Kit", "Lu"), seats=4,
        layout="A:open B:pass C:open D:garnet\nE:open F:garnet",
        round_seconds=90,
    )
    assert m.chat(3, "I go for D").rejection is None
    assert m.submit(0, "A B", [2]).rejection is None
    assert m.submit(1, "C", [4]).rejection is not None  # no such weapon
    assert m.submit(1, "C", [1]).rejection is None
    assert m.submit(3, "D", [1]).rejection is None
    m.tick_at_deadline()  # Kit missed it
    assert m.gs.round == 2
    keys = "keys-to-success"
    m.bots_to_the_end(
        [bot_of(keys, "heuristic", 1), bot_of(keys, "heuristic", 2), bot_of(keys, "random", 3),
         bot_of(keys, "heuristic", 4)]
    )
    return m


# --- Labyrinth ------------------------------------------------------------------------------

LABYRINTH_PLAN = (Path(labyrinth.__file__).parent / "plans" / "example.txt").read_text()


def labyrinth_dark_move() -> Scripted:
    """labyrinth, two seats on the rule book's example plan given by a host: a start in a
    river refused without a reason and chosen again; a status question; a dark move that
    picks up a treasure (told to its player alone); a walk into a river; a recall; then
    the default line-up of bots to the end."""
    m = Scripted(
        labyrinth, variant="labyrinth", names=("Ann", "Bob"), ts=T0, match_id="golden-labyrinth",
        seed=SEED, options={"players": 2, "plan": LABYRINTH_PLAN, "clock_scale": 0.001},
    )
    m.step_ms = 1

    def to_act() -> int | None:
        return lab_rules.to_act(m.ms.game_state.core)

    def move(seat: int, text: str) -> engine.Outcome:
        assert to_act() == seat
        out = m.propose("command", seat, {"type": "move", "move": text})
        assert out.rejection is None, out.rejection
        return out

    starts = {0: [[1, 2], [3, 2]], 1: [[4, 3]]}  # 1,2 is a river cell: refused (6.1)
    while m.ms.game_state.core.phase == "start":
        seat = to_act()
        assert seat is not None
        assert m.propose("command", seat, {"type": "start", "cell": starts[seat].pop(0)}).rejection is None
    assert m.propose("command", 1, {"type": "move", "move": "status"}).rejection is None
    if to_act() == 1:
        move(1, "skip")
    move(0, "go left, don't tell the result")  # picks up the fake treasure at 3,1
    move(1, "go right")  # into the river at 4,4, carried to the delta at 3,4
    assert m.propose("command", 0, {"type": "move", "move": "recall 2"}).rejection is None
    m.bots_to_the_end([bot_of("labyrinth", name, seat) for seat, name in enumerate(lineup("labyrinth", 2))])
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

# The scripted playthroughs, by game and name.
SCRIPTED: Mapping[str, Mapping[str, Playthrough]] = {
    "five-card-trick": PLAYTHROUGHS,
    "memory-maze": {
        "black-garnet-periods": black_garnet_periods,
        "minos-reserve": minos_reserve,
        "crazy-cooldowns": crazy_cooldowns,
    },
    "keys-to-success": {
        "keys-to-success-vote": keys_to_success_vote,
        "gatekeeping-bots": gatekeeping_bots,
    },
    "labyrinth": {"labyrinth-dark-move": labyrinth_dark_move},
}



# --- any other game: its bots ---------------------------------------------------------------


def bots_playthrough(game: str, variant: str) -> Playthrough:
    """A playthrough of `game`'s default line-up of bots (seeded, each sleeping through a
    deadline now and then), on the variant's default options with every clock a thousandth: what a game registered without scripts of its
    own is recorded by, so its first golden file needs no test code."""

    def play() -> Scripted:
        rules = hosted(game).rules
        m = Scripted(
            rules, variant=variant, names=None, ts=T0, match_id=f"golden-{variant}",
            seed=SEED, options={"clock_scale": 0.001},
        )
        m.step_ms = 1  # bots answer 1 ms apart, well within a thousandth of any clock
        names = lineup(game, m.ms.seats)
        # Now and then a bot sleeps through a deadline (checks.Drowsy), so the clock's
        # default plays are recorded too.
        m.bots_to_the_end([
            Drowsy(bot_of(game, name, seat), random.Random(f"nap {seat}"), 0.1, lambda: len(m.entries))
            for seat, name in enumerate(names)
        ])
        return m

    play.__doc__ = f"{game} {variant}: the default line-up of bots, seeded, to the end"
    return play


def _with_bot_playthroughs(
    scripted: Mapping[str, Mapping[str, Playthrough]],
) -> dict[str, Mapping[str, Playthrough]]:
    """`scripted`, and for every hosted game that has no scripted playthrough, one
    playthrough of its bots per variant (named `<variant>-bots`)."""
    out = dict(scripted)
    for game, h in hosted_games().items():
        if game not in out:
            out[game] = {f"{v.name}-bots": bots_playthrough(game, v.name) for v in h.rules.variants}
    return out


# Every game's playthroughs, by game and name: the scripts above, and bots for the rest.
PLAYTHROUGHS_OF = _with_bot_playthroughs(SCRIPTED)

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

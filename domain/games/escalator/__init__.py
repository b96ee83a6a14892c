"""Escalator: six players stay on their escalators for as long as they can, using
commands to drop the others off theirs.

Every player starts at level 20 of its own escalator; below level 1 it has fallen. Locks
at 5, 10, 15 and 20: once a player's level is below a lock it can never reach that lock
again. Rounds overlap like a processor pipeline. In each step every standing player
submits at once its Fetch for this round (a command and a target) and, if it was given
more than one command last round, its Decode choice for that round; then last round's
Execute resolves and this round's Fetch is revealed as the Decode information. After the
last Fetch the pipeline drains; once no command can be fetched the game auto-resolves,
everyone descending one level a step. The first to fall lose; the last standing earns a
Token of Life, and so does the player with the most hidden points among the others.

The commands are data (domain/games/escalator/edition.py, commands/*.toml). See
docs/rules/escalator.md for the rules as implemented and every ruling.

The module object itself is the Game (domain.contract.Game). Everything here is pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.contract import Decision, OptionsError, Rejection, Result, VariantInfo
from domain.games.escalator.edition import (
    DEFAULT_EDITION,
    PRESETS,
    Command,
    Edition,
    EditionError,
    edition_of,
)
from domain.kit.clocks import clock_ms
from domain.kit.options import Boolean, ClockScale, Custom, Integer, OptionTable
from domain.kit.rounds import SimultaneousRound
from domain.kit.seats import update_at
from domain.kit.setup import all_public, always_seeded
from domain.rng import Rng

# --- identity --------------------------------------------------------------------------

name: str = "escalator"
title: str = "Escalator"
rules_version: str = "esc-1"

variants: Sequence[VariantInfo] = (
    VariantInfo(
        "escalator",
        "Escalator (Main Match)",
        "Six players on their own escalators, levels 20 down to 1, fetch, decode and "
        "execute 36 commands in an overlapping pipeline; the first to fall lose.",
    ),
)
default_variant: str = "escalator"

TOP = 20
LOCKS: tuple[int, ...] = (5, 10, 15, 20)
BLOCK = 4  # each colour at least once in every block of 4 rounds
MAX_ON_TARGET = 3  # commands one player may use on another over the match
CROWD = 3  # this many pickers disable a command
MISSED_FETCH_DROP = 2
MAX_SEATS = 12


# --- options ---------------------------------------------------------------------------


class Options(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = default_variant
    seats: int = 6
    step_seconds: int = 300
    clock_scale: float = 1.0
    early_close: bool = True
    edition: str = DEFAULT_EDITION


def _edition(value: Any, variant: str) -> str:
    if not isinstance(value, str):
        raise OptionsError("a shipped edition's name or a command edition's text")
    try:
        edition_of(value)
    except EditionError as exc:
        raise OptionsError(str(exc)) from None
    return value


OPTIONS: OptionTable[Options] = OptionTable(
    Options,
    (default_variant,),
    [
        Integer("seats", 6, 3, MAX_SEATS, "number of players (the Main Match has 6)"),
        Integer(
            "step_seconds", 300, 1, 7 * 86_400,
            "seconds to submit in a pipeline step (a Fetch and, if due, a Decode); a "
            "missed Fetch drops the player 2 levels, a missed Decode activates every "
            "command given",
        ),
        ClockScale(),
        Boolean(
            "early_close", True,
            "close a step as soon as every standing player has submitted what it owes",
        ),
        Custom(
            "edition", DEFAULT_EDITION,
            "the command edition: a shipped edition's name (" + ", ".join(PRESETS) + ") "
            "or an edition's text (TOML or JSON, docs/rules/escalator.md)",
            type="string", parse=_edition, schema={"examples": list(PRESETS)},
        ),
    ],
)


def options_schema(variant: str) -> dict[str, Any]:
    return OPTIONS.schema(variant)


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    return OPTIONS.configure(variant, options)


def step_ms(options: Options) -> int:
    return clock_ms(options.step_seconds, options.clock_scale)


def seat_count(options: Any) -> int:
    return int(options.seats)


def make_setup(options: Any, rng: Rng) -> Any:
    """Nothing is dealt: the seed only breaks an Elimination Candidate tie."""
    return {}


public_options = all_public
seeded_setup = always_seeded


# --- commands --------------------------------------------------------------------------


class Fetch(msgspec.Struct, frozen=True, tag="fetch", forbid_unknown_fields=True):
    """This round's Fetch: a command and the seat to use it on (replaceable until the
    step closes)."""

    round: int
    command: str
    target: int


class Decode(msgspec.Struct, frozen=True, tag="decode", forbid_unknown_fields=True):
    """The Decode choice of the round before: which of the commands given to the player
    is activated (replaceable until the step closes)."""

    round: int
    command: str


ClientCommand = Fetch | Decode
command_type: Any = ClientCommand


# --- events ----------------------------------------------------------------------------


class StepStarted(msgspec.Struct, frozen=True, tag="step_started"):
    step: int
    deadline: int
    fetch_round: int | None  # the round fetched in this step (None: the pipeline drains)
    decode_round: int | None  # the round decoded (and executed at the end) in this step
    fetchers: tuple[int, ...]  # seats that owe a Fetch
    deciders: tuple[int, ...]  # seats that owe a Decode choice


class Fetched(msgspec.Struct, frozen=True, tag="fetched"):
    seat: int
    round: int
    command: str
    target: int


class Decoded(msgspec.Struct, frozen=True, tag="decoded"):
    seat: int
    round: int
    command: str


class Pick(msgspec.Struct, frozen=True):
    """One seat's Fetch as the step closed."""

    seat: int
    command: str | None  # None: missed
    target: int | None
    crowded: bool  # three or more picked the command: nobody uses it


class Given(msgspec.Struct, frozen=True):
    """A command used in a round: by `user` on `target`."""

    command: str
    user: int
    target: int


class Learned(msgspec.Struct, frozen=True):
    """Private information a command gave `seat`: `kind` "points" (the point total of
    `about`, `value`) or "user" (`about` used `command` on it)."""

    seat: int
    kind: str
    about: int
    value: int
    command: str


class Named(msgspec.Struct, frozen=True):
    """A command exactly two players picked: their names are revealed."""

    command: str
    users: tuple[int, int]


class StepResolved(msgspec.Struct, frozen=True, tag="step_resolved"):
    step: int
    at: int
    # The Fetch of this step's round, and what it reveals as Decode information.
    fetch_round: int | None
    picks: tuple[Pick, ...]  # every seat that owed a Fetch, seat order
    crowded: tuple[str, ...]  # commands disabled by three or more pickers (name order)
    given: tuple[Given, ...]  # the commands used this round (name, then user order)
    named: tuple[Named, ...]
    # The Execute of the round before.
    decode_round: int | None
    choices: tuple[tuple[int, str | None], ...]  # (seat, choice or None: silent) of deciders
    activated: tuple[Given, ...]
    levels_before: tuple[int, ...]
    levels_after: tuple[int, ...]
    caps: tuple[int, ...]
    descent: tuple[int, ...]  # levels each seat descended in the Execute (0: shielded / none)
    missed: tuple[int, ...]  # seats dropped 2 levels for a missed Fetch
    fell: tuple[int, ...]  # seats that fell in this step
    third: tuple[int, ...]  # seats ranked third after the Execute (a hidden point each)
    points: tuple[int, ...]  # every seat's point total after the step
    learned: tuple[Learned, ...]
    disabled: tuple[str, ...]  # every disabled command after the step (name order)


class AutoResolved(msgspec.Struct, frozen=True, tag="auto_resolved"):
    """No command can be fetched any more: everyone descends 1 level a step until at
    most one player stands. `falls[s]` is the auto step (1, 2, ...) seat s fell in."""

    from_step: int
    steps: int
    levels_before: tuple[int, ...]
    levels_after: tuple[int, ...]
    falls: tuple[int | None, ...]


class GameOver(msgspec.Struct, frozen=True, tag="game_over"):
    steps: int
    survivor: int | None  # the one player still standing (earns a Token of Life)
    losers: tuple[int, ...]  # the first to fall
    ec: int | None  # the Elimination Candidate
    ec_by: str  # only_loser | points | level | draw
    points_tol: int | None  # the most points among the players not excluded
    tol_excluded: tuple[int, ...]
    fell_step: tuple[int | None, ...]  # the step each seat fell in (auto steps continue the count)
    levels: tuple[int, ...]
    points: tuple[int, ...]
    points_rank: tuple[int, ...]
    position_rank: tuple[int, ...]
    garnets: tuple[int, ...]
    reason: str


Event = StepStarted | Fetched | Decoded | StepResolved | AutoResolved | GameOver


# --- state -----------------------------------------------------------------------------


class PlayerState(msgspec.Struct, frozen=True):
    level: int = TOP
    cap: int = TOP
    points: int = 0
    fell: int | None = None  # the step it fell in
    block: int = 0  # the block of rounds `colours` counts in
    colours: tuple[str, ...] = ()  # colours used in that block
    fetch: tuple[str, int] | None = None  # this step's Fetch so far
    decode: str | None = None  # this step's Decode choice so far


class State(msgspec.Struct, frozen=True):
    options: Options
    edition: Edition
    seed: bytes
    players: tuple[PlayerState, ...]
    phase: str = "waiting"  # waiting | play | over
    step: int = 0
    deadline: int | None = None
    fetch_round: int | None = None
    decode_round: int | None = None
    fetchers: tuple[int, ...] = ()
    deciders: tuple[int, ...] = ()
    decoding: tuple[Given, ...] = ()  # the commands used in the round in Decode
    disabled: tuple[str, ...] = ()
    pairs: tuple[tuple[int, int, str], ...] = ()  # (user, target, colour) over the match
    history: tuple[StepResolved, ...] = ()
    auto: AutoResolved | None = None
    finished: GameOver | None = None

    def standing(self, seat: int) -> bool:
        return self.players[seat].fell is None

    def standing_seats(self) -> tuple[int, ...]:
        return tuple(s for s in range(len(self.players)) if self.standing(s))

    def given_to(self, seat: int) -> tuple[Given, ...]:
        return tuple(g for g in self.decoding if g.target == seat)


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    return State(
        options=options,
        edition=edition_of(options.edition),
        seed=bytes(seed),
        players=tuple(PlayerState() for _ in range(options.seats)),
    )


# --- locks and ranks -------------------------------------------------------------------


def ceiling(level: int) -> int:
    """The highest level a player at `level` may ever reach again: one below the lowest
    lock above it (20 at the top)."""
    above = [lock for lock in LOCKS if lock > level]
    return min(above) - 1 if above else TOP


def competition_ranks(values: Sequence[int]) -> tuple[int, ...]:
    """Ranks, highest value first, tied values sharing the best rank (20, 19, 19, 18 rank
    1st, 2nd, 2nd, 4th)."""
    return tuple(1 + sum(1 for w in values if w > v) for v in values)


def garnets_for(rank: int) -> int:
    """First gets 5 garnets, second 4, ... sixth and below none."""
    return max(0, 6 - rank)


# --- the Fetch rules -------------------------------------------------------------------


def block_of(round_: int) -> int:
    return (round_ - 1) // BLOCK


def colours_used(state: State, seat: int, round_: int) -> tuple[str, ...]:
    p = state.players[seat]
    return p.colours if p.block == block_of(round_) else ()


def pair_colours(state: State, user: int, target: int) -> tuple[str, ...]:
    return tuple(c for u, t, c in state.pairs if u == user and t == target)


def _pair_ok(state: State, user: int, target: int, colour: str) -> bool:
    used = pair_colours(state, user, target)
    return len(used) < MAX_ON_TARGET and colour not in used


def enabled(state: State) -> tuple[Command, ...]:
    off = set(state.disabled)
    return tuple(c for c in state.edition.commands if c.name not in off)


def available_colours(state: State, seat: int) -> tuple[str, ...]:
    """The colours `seat` could fetch now: an enabled command of the colour, and a
    standing player it may still give that colour to."""
    targets = [t for t in state.standing_seats() if t != seat]
    colours = {c.colour for c in enabled(state)}
    return tuple(
        k for k in state.edition.colours
        if k in colours and any(_pair_ok(state, seat, t, k) for t in targets)
    )


def needed_colours(state: State, seat: int, round_: int) -> tuple[str, ...]:
    """The colours `seat` still owes in the block of `round_` that it could fetch."""
    done = colours_used(state, seat, round_)
    return tuple(k for k in available_colours(state, seat) if k not in done)


def rounds_left_in_block(round_: int) -> int:
    """Rounds of `round_`'s block after it."""
    return BLOCK - 1 - (round_ - 1) % BLOCK


def can_fetch(state: State, seat: int) -> bool:
    return state.standing(seat) and bool(available_colours(state, seat))


def fetch_problem(state: State, seat: int, command: str, target: Any) -> tuple[str, str] | None:
    """Why a Fetch is invalid ((code, reason)), or None."""
    round_ = state.fetch_round
    if round_ is None:
        return "no_fetch", "no round is being fetched in this step (the pipeline drains)"
    if seat not in state.fetchers:
        return "no_fetch_due", "you have no Fetch to make in this step"
    cmd = state.edition.find(command) if isinstance(command, str) else None
    if cmd is None:
        return "unknown_command", f"there is no command {command!r} in this edition"
    if cmd.name in state.disabled:
        return "disabled", f"{cmd.name} is disabled"
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < len(state.players):
        return "bad_target", f"seat {target!r} is not a player of this match"
    if target == seat:
        return "self_target", "you cannot use a command on yourself"
    if not state.standing(target):
        return "fallen_target", f"seat {target} has fallen and cannot be targeted"
    used = pair_colours(state, seat, target)
    if len(used) >= MAX_ON_TARGET:
        return "target_limit", f"you have used {MAX_ON_TARGET} commands on seat {target} already"
    if cmd.colour in used:
        return "colour_on_target", (
            f"you have used a {cmd.colour} command on seat {target} already: the commands "
            "used on one player must be of different colours"
        )
    needed = needed_colours(state, seat, round_)
    if needed and cmd.colour not in needed and len(needed) > rounds_left_in_block(round_):
        first = BLOCK * block_of(round_) + 1
        return "colour_due", (
            f"every colour at least once in rounds {first}-{first + BLOCK - 1}: this round "
            f"must be {' or '.join(needed)}"
        )
    return None


# --- the step --------------------------------------------------------------------------


def _awaits(state: State, seat: int) -> bool:
    return seat in state.fetchers or seat in state.deciders


def _complete(state: State, seat: int) -> bool | None:
    p = state.players[seat]
    if seat in state.fetchers and p.fetch is None:
        return None
    if seat in state.deciders and p.decode is None:
        return None
    return True


def _step_started(state: State, step: int, decode_round: int | None, at: int) -> StepStarted:
    """The next step: a Fetch if any standing player can fetch (once nobody can, no
    later step fetches), and the Decode of `decode_round`."""
    draining = state.step > 0 and state.fetch_round is None
    fetchers = () if draining else tuple(s for s in state.standing_seats() if can_fetch(state, s))
    deciders: tuple[int, ...] = ()
    if decode_round is not None:
        counts = Counter(g.target for g in state.decoding)
        deciders = tuple(s for s in state.standing_seats() if counts[s] > 1)
    return StepStarted(
        step=step,
        deadline=at + step_ms(state.options),
        fetch_round=step if fetchers else None,
        decode_round=decode_round,
        fetchers=fetchers,
        deciders=deciders,
    )


def start(state: State, now: int) -> tuple[Event, ...]:
    return tuple(_begin(state, 1, None, now))


def _begin(state: State, step: int, decode_round: int | None, at: int) -> list[Event]:
    """A step's start, then its close at once if it waits on nobody."""
    started = _step_started(state, step, decode_round, at)
    if started.fetch_round is None and decode_round is None:
        return _auto_and_end(state, at)
    after = evolve(state, started)
    if not started.fetchers and not started.deciders:
        return [started, *_close_step(after, at)]
    return [started]


def _activations(state: State) -> tuple[list[Given], list[tuple[int, str | None]]]:
    """The commands of the round in Decode that activate, and each decider's choice."""
    activated: list[Given] = []
    choices: list[tuple[int, str | None]] = []
    for seat in range(len(state.players)):
        mine = state.given_to(seat)
        if not mine or not state.standing(seat):
            continue  # commands assigned to fallen players do not resolve
        choice = state.players[seat].decode if seat in state.deciders else None
        if seat in state.deciders:
            choices.append((seat, choice))
        if len(mine) == 1 or choice is None:
            activated.extend(mine)  # one command always executes; a silent player gets all
        else:
            activated.extend(g for g in mine if g.command == choice)
    return activated, choices


class Resolution(msgspec.Struct, frozen=True):
    levels: tuple[int, ...]
    caps: tuple[int, ...]
    points: tuple[int, ...]
    descent: tuple[int, ...]
    learned: tuple[Learned, ...]


def execute(
    edition: Edition,
    levels: Sequence[int],
    caps: Sequence[int],
    points: Sequence[int],
    standing: Sequence[bool],
    activated: Sequence[Given],
    missed: Sequence[int] = (),
    descend: bool = True,
) -> Resolution:
    """One Execute (and the step's missed-Fetch drops), in this order, every part on the
    start-of-phase levels and none depending on seat numbers:

    1. Each activated command runs its target program (the target is standing) and its
       user program (if the user is standing).
    2. Swaps: two players exchange their start levels, unless one of them is in more
       than one swap this Execute (then each of its swaps is cancelled).
    3. Redirects: the down moves other commands put on a player with exactly one
       redirect land on that redirect's other player instead (once; lost if that player
       has fallen). Two or more redirects on one player cancel each other.
    4. Moves: each player's ups and downs are summed onto its (swapped) level; it never
       rises above its lock.
    5. Descent, for every standing player not shielded: 1 level if its command activated
       or an activated command targeted it, else 2; 1 more each once anyone has fallen
       (before the descent, this Execute's moves included). With `descend` off (the
       first step, which has no Execute) there is no descent.
    6. Each seat in `missed` drops 2 levels.
    7. Points change (a total never goes below 0), then information is learned.
    Locks are then set from the levels reached."""
    n = len(levels)
    start = list(levels)
    runs: list[tuple[int, int, int, Command]] = []  # (subject, other, command index, command)
    for i, g in enumerate(activated):
        cmd = edition.find(g.command)
        assert cmd is not None, g.command
        if not standing[g.target]:
            continue
        runs.append((g.target, g.user, i, cmd))
    effects: list[tuple[int, int, int, str, int]] = []  # (subject, other, index, kind, amount)
    for subject, other, i, cmd in runs:
        for e in cmd.target:
            effects.append((subject, other, i, e.kind, e.amount))
        if standing[other]:
            for e in cmd.user:
                effects.append((other, subject, i, e.kind, e.amount))
    # 2. swaps
    swaps = [(s, o) for s, o, _, k, _ in effects if k == "swap" and standing[s] and standing[o]]
    in_swaps = Counter(x for pair in swaps for x in pair)
    base = list(start)
    for s, o in swaps:
        if in_swaps[s] == 1 and in_swaps[o] == 1:
            base[s], base[o] = start[o], start[s]
    # 3. redirects
    redirects: dict[int, list[tuple[int, int]]] = {}
    for s, o, i, k, _ in effects:
        if k == "redirect":
            redirects.setdefault(s, []).append((o, i))
    up = [0] * n
    down = [0] * n
    for s, _, i, k, amount in effects:
        if k == "up":
            up[s] += amount
        elif k == "down":
            where = redirects.get(s, [])
            if len(where) == 1 and where[0][1] != i:
                dest = where[0][0]
                if standing[dest]:
                    down[dest] += amount
            else:
                down[s] += amount
    # 4. moves
    new = list(start)
    for s in range(n):
        if standing[s]:
            new[s] = min(caps[s], base[s] + up[s] - down[s])
    # 5. descent
    descent = [0] * n
    if descend:
        shielded = {s for s, _, _, k, _ in effects if k == "shield"}
        involved = {g.target for g in activated if standing[g.target]}
        involved |= {g.user for g in activated if standing[g.target]}
        extra = 1 if any(not standing[s] or new[s] < 1 for s in range(n)) else 0
        for s in range(n):
            if standing[s] and new[s] >= 1 and s not in shielded:
                descent[s] = (1 if s in involved else 2) + extra
                new[s] -= descent[s]
    # 6. missed Fetches
    for s in missed:
        if standing[s] and new[s] >= 1:
            new[s] -= MISSED_FETCH_DROP
    # 7. points and information
    gained = [0] * n
    for s, _, _, k, amount in effects:
        if k == "points":
            gained[s] += amount
    pts = [max(0, points[s] + gained[s]) for s in range(n)]
    learned: list[Learned] = []
    for s, o, i, k, _ in effects:
        if k == "learn_points":
            learned.append(Learned(seat=s, kind="points", about=o, value=pts[o], command=activated[i].command))
        elif k == "unmask":
            learned.append(Learned(seat=s, kind="user", about=o, value=o, command=activated[i].command))
    new_caps = tuple(
        min(caps[s], ceiling(new[s])) if standing[s] and new[s] >= 1 else caps[s] for s in range(n)
    )
    return Resolution(
        levels=tuple(new),
        caps=new_caps,
        points=tuple(pts),
        descent=tuple(descent),
        learned=tuple(sorted(learned, key=lambda x: (x.seat, x.command, x.kind))),
    )


def third_place(levels: Sequence[int], standing: Sequence[bool]) -> tuple[int, ...]:
    """The standing players ranked third by level (none if no rank is exactly 3)."""
    seats = [s for s in range(len(levels)) if standing[s]]
    ranks = competition_ranks([levels[s] for s in seats])
    return tuple(s for s, r in zip(seats, ranks, strict=True) if r == 3)


def _close_step(state: State, at: int) -> list[Event]:
    n = len(state.players)
    # The Fetch of this round.
    picks: list[Pick] = []
    missed: list[int] = []
    fetched: list[tuple[int, str, int]] = []
    for seat in state.fetchers:
        f = state.players[seat].fetch
        if f is None:
            missed.append(seat)
            picks.append(Pick(seat=seat, command=None, target=None, crowded=False))
        else:
            fetched.append((seat, f[0], f[1]))
    counts = Counter(c for _, c, _ in fetched)
    crowded = tuple(sorted(c for c, k in counts.items() if k >= CROWD))
    for seat, c, t in fetched:
        picks.append(Pick(seat=seat, command=c, target=t, crowded=c in crowded))
    picks.sort(key=lambda p: p.seat)
    given = tuple(
        sorted(
            (Given(command=c, user=s, target=t) for s, c, t in fetched if c not in crowded),
            key=lambda g: (g.command, g.user),
        )
    )
    named = _named(given)
    # The Execute of the round before (the first step has none).
    activated, choices = _activations(state) if state.decode_round is not None else ([], [])
    before = tuple(p.level for p in state.players)
    standing = [p.fell is None for p in state.players]
    res = execute(
        state.edition,
        before,
        tuple(p.cap for p in state.players),
        tuple(p.points for p in state.players),
        standing,
        activated,
        missed,
        descend=state.decode_round is not None,
    )
    now_standing = [standing[s] and res.levels[s] >= 1 for s in range(n)]
    fell = tuple(s for s in range(n) if standing[s] and not now_standing[s])
    third = third_place(res.levels, now_standing) if state.decode_round is not None else ()
    points = tuple(res.points[s] + (1 if s in third else 0) for s in range(n))
    learned = tuple(
        msgspec.structs.replace(x, value=points[x.about]) if x.kind == "points" else x
        for x in res.learned
    )
    disabled = tuple(sorted({*state.disabled, *(c for _, c, _ in fetched)}))
    resolved = StepResolved(
        step=state.step,
        at=at,
        fetch_round=state.fetch_round,
        picks=tuple(picks),
        crowded=crowded,
        given=given,
        named=named,
        decode_round=state.decode_round,
        choices=tuple(choices),
        activated=tuple(sorted(activated, key=lambda g: (g.command, g.user))),
        levels_before=before,
        levels_after=res.levels,
        caps=res.caps,
        descent=res.descent,
        missed=tuple(missed),
        fell=fell,
        third=third,
        points=points,
        learned=learned,
        disabled=disabled,
    )
    events: list[Event] = [resolved]
    after = evolve(state, resolved)
    if len(after.standing_seats()) <= 1:
        events.append(game_over(after))
        return events
    events.extend(_begin(after, state.step + 1, state.fetch_round, at))
    return events


def _named(given: Sequence[Given]) -> tuple[Named, ...]:
    by: dict[str, list[int]] = {}
    for g in given:
        by.setdefault(g.command, []).append(g.user)
    return tuple(
        Named(command=c, users=(users[0], users[1]))
        for c, users in sorted(by.items())
        if len(users) == 2
    )


def _auto_and_end(state: State, at: int) -> list[Event]:
    """No command can be fetched and nothing is left to decode: auto-resolution."""
    events: list[Event] = []
    after = state
    if len(state.standing_seats()) > 1:
        levels = [p.level for p in state.players]
        falls: list[int | None] = [None] * len(levels)
        steps = 0
        while sum(1 for s in range(len(levels)) if falls[s] is None and levels[s] >= 1) > 1:
            steps += 1
            for s in range(len(levels)):
                if state.standing(s) and falls[s] is None:
                    levels[s] -= 1
                    if levels[s] < 1:
                        falls[s] = steps
        auto = AutoResolved(
            from_step=state.step,
            steps=steps,
            levels_before=tuple(p.level for p in state.players),
            levels_after=tuple(levels),
            falls=tuple(falls),
        )
        events.append(auto)
        after = evolve(state, auto)
    events.append(game_over(after))
    return events


# --- the end ---------------------------------------------------------------------------


def game_over(state: State) -> GameOver:
    n = len(state.players)
    fell = tuple(p.fell for p in state.players)
    standing = [s for s in range(n) if fell[s] is None]
    survivor = standing[0] if len(standing) == 1 else None
    fallen_steps = [f for f in fell if f is not None]
    first = min(fallen_steps) if fallen_steps else None
    last = max(fallen_steps) if fallen_steps else None
    losers = tuple(s for s in range(n) if fell[s] is not None and fell[s] == first)
    points = tuple(p.points for p in state.players)
    levels = tuple(p.level for p in state.players)
    ec, ec_by = elimination_candidate(state.seed, losers, points, levels)
    excluded = set(losers)
    if survivor is not None:
        excluded.add(survivor)
    elif not standing:
        excluded |= {s for s in range(n) if fell[s] == last}
    others = [s for s in range(n) if s not in excluded]
    points_tol = None
    if others:
        top = max(points[s] for s in others)
        best = [s for s in others if points[s] == top]
        points_tol = best[0] if len(best) == 1 else None
    points_rank = competition_ranks(points)
    # Position: still standing first, then the later a player fell the better.
    horizon = (last or 0) + 1
    position_rank = competition_ranks([horizon if f is None else f for f in fell])
    garnets = tuple(garnets_for(a) + garnets_for(b) for a, b in zip(points_rank, position_rank, strict=True))
    parts = [
        f"losers: {_seats(losers)}",
        f"Elimination Candidate: seat {ec}" if ec is not None else "no Elimination Candidate",
        f"Token of Life (last standing): seat {survivor}" if survivor is not None
        else "nobody stands: no Token of Life for the last standing",
        f"Token of Life (points): seat {points_tol}" if points_tol is not None
        else "no Token of Life for points (a tie or nobody eligible)",
    ]
    return GameOver(
        steps=state.step,
        survivor=survivor,
        losers=losers,
        ec=ec,
        ec_by=ec_by,
        points_tol=points_tol,
        tol_excluded=tuple(sorted(excluded)),
        fell_step=fell,
        levels=levels,
        points=points,
        points_rank=points_rank,
        position_rank=position_rank,
        garnets=garnets,
        reason="; ".join(parts),
    )


def elimination_candidate(
    seed: bytes, losers: Sequence[int], points: Sequence[int], levels: Sequence[int]
) -> tuple[int | None, str]:
    """The loser with fewer points; on a tie the one that fell further (lower level);
    then a draw from the match seed."""
    if not losers:
        return None, "none"
    if len(losers) == 1:
        return losers[0], "only_loser"
    fewest = min(points[s] for s in losers)
    tied = [s for s in losers if points[s] == fewest]
    if len(tied) == 1:
        return tied[0], "points"
    lowest = min(levels[s] for s in tied)
    tied = [s for s in tied if levels[s] == lowest]
    if len(tied) == 1:
        return tied[0], "level"
    return Rng(seed, "ec-draw").choice(sorted(tied)), "draw"


def _seats(seats: Sequence[int]) -> str:
    if not seats:
        return "nobody"
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(map(str, seats))


# --- deciding --------------------------------------------------------------------------


def decide(state: State, seat: int, command: Any, now: int) -> Decision:
    if state.phase != "play":
        return Rejection("not_in_play", "no step is in play")
    if not state.standing(seat):
        return Rejection("fallen", "you have fallen off your escalator")
    if isinstance(command, Fetch):
        if command.round != state.fetch_round:
            where = f"round {state.fetch_round} is being fetched" if state.fetch_round else "nothing is being fetched"
            return Rejection("wrong_round", f"that Fetch is for round {command.round}; {where}")
        problem = fetch_problem(state, seat, command.command, command.target)
        if problem is not None:
            return Rejection(*problem)
        cmd = state.edition.find(command.command)
        assert cmd is not None
        event = Fetched(seat=seat, round=command.round, command=cmd.name, target=command.target)
        return ROUND.accept(state, event, now)
    if isinstance(command, Decode):
        if state.decode_round is None or command.round != state.decode_round:
            where = f"round {state.decode_round} is in Decode" if state.decode_round else "no round is in Decode"
            return Rejection("wrong_round", f"that Decode is for round {command.round}; {where}")
        if seat not in state.deciders:
            return Rejection(
                "no_decode_due", "only a player given more than one command chooses which activates"
            )
        mine = {g.command.casefold(): g.command for g in state.given_to(seat)}
        chosen = mine.get(command.command.casefold()) if isinstance(command.command, str) else None
        if chosen is None:
            return Rejection(
                "not_given", f"you were not given {command.command!r} (you were given {', '.join(sorted(set(mine.values())))})"
            )
        return ROUND.accept(state, Decoded(seat=seat, round=command.round, command=chosen), now)
    return Rejection("bad_command", "unknown command")


# --- time ------------------------------------------------------------------------------


def deadline(state: State) -> int | None:
    return state.deadline if state.phase == "play" else None


def expire(state: State, at: int) -> tuple[Event, ...]:
    return tuple(_close_step(state, at))


# --- folding ---------------------------------------------------------------------------


def evolve(state: State, event: Any) -> State:
    rep = msgspec.structs.replace
    if isinstance(event, StepStarted):
        return rep(
            state,
            phase="play",
            step=event.step,
            deadline=event.deadline,
            fetch_round=event.fetch_round,
            decode_round=event.decode_round,
            fetchers=event.fetchers,
            deciders=event.deciders,
            players=tuple(rep(p, fetch=None, decode=None) for p in state.players),
        )
    if isinstance(event, Fetched):
        return rep(state, players=update_at(state.players, event.seat, fetch=(event.command, event.target)))
    if isinstance(event, Decoded):
        return rep(state, players=update_at(state.players, event.seat, decode=event.command))
    if isinstance(event, StepResolved):
        players = []
        for s, p in enumerate(state.players):
            block, colours = p.block, p.colours
            pick = next((x for x in event.picks if x.seat == s), None)
            if event.fetch_round is not None and pick is not None and pick.command is not None and not pick.crowded:
                b = block_of(event.fetch_round)
                colour = state.edition.colour_of(pick.command)
                colours = (*(colours if block == b else ()), colour)
                block = b
            players.append(
                rep(
                    p,
                    level=event.levels_after[s],
                    cap=event.caps[s],
                    points=event.points[s],
                    fell=event.step if s in event.fell else p.fell,
                    block=block,
                    colours=colours,
                    fetch=None,
                    decode=None,
                )
            )
        pairs = (
            *state.pairs,
            *((g.user, g.target, state.edition.colour_of(g.command)) for g in event.given),
        )
        return rep(
            state,
            players=tuple(players),
            decoding=event.given,
            disabled=event.disabled,
            pairs=pairs,
            history=(*state.history, event),
            deadline=None,
        )
    if isinstance(event, AutoResolved):
        return rep(
            state,
            auto=event,
            players=tuple(
                rep(
                    p,
                    level=event.levels_after[s],
                    fell=p.fell if fall is None else event.from_step + fall,
                )
                for (s, p), fall in zip(enumerate(state.players), event.falls, strict=True)
            ),
        )
    if isinstance(event, GameOver):
        return rep(state, phase="over", finished=event, deadline=None)
    raise TypeError(f"not an {name} event: {event!r}")


ROUND: SimultaneousRound[State, bool] = SimultaneousRound(
    seats=lambda state: len(state.players),
    pending=_complete,
    in_play=_awaits,
    early_close=lambda state: state.options.early_close,
    close=lambda state, at: _close_step(state, at),
    evolve=lambda state, event: evolve(state, event),
)


def result(state: State) -> Result | None:
    over = state.finished
    if over is None:
        return None
    return Result(winner=over.survivor, reason=over.reason, rounds=over.steps, scores=over.garnets)


def round_of(state: State) -> int:
    return state.step

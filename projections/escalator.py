"""What each viewer may see of Escalator.

Public (every player and spectators): the edition's commands, every player's level and
lock, who has fallen and when, which commands are disabled, who owes a Fetch or a Decode
in the step, and, when a round's Fetch is revealed (its Decode information): how many
commands each player was given and their colours, which commands were used (not by whom
nor on whom), which were disabled by three or more pickers, and the names of the two
players when exactly two picked the same command. After an Execute: the levels reached,
who fell, who missed a Fetch (and dropped 2 levels), and who was ranked third (a point
each; the levels say as much).

Private to one player: its own Fetch and Decode choice, the commands given to it (by
name), whether its own command was crowded out or activated, which commands activated
on it, its own descent, its point total, and what commands taught it (another's point
total, or who used a command on it).

Never shown to another player during play: who targeted whom, another player's list,
choice or points. Once the match has ended everything is revealed (RULINGS.md: Escalator's
targets, lists and points are revealed).
"""

from __future__ import annotations

from typing import Any

from domain.engine import MatchState
from domain.games import escalator as esc
from domain.games.escalator import (
    AutoResolved,
    Decoded,
    Fetched,
    GameOver,
    Given,
    State,
    StepResolved,
    StepStarted,
)
from domain.games.escalator.edition import DEFAULT_EDITION, PRESETS, Edition
from domain.rng import Rng
from projections.common import who
from projections.contract import NOTHING_SEALED, Rehearsal, Twins, Viewer

# --- pieces ----------------------------------------------------------------------------


def _edition_view(edition: Edition) -> dict[str, Any]:
    return {
        "name": edition.name,
        "title": edition.title,
        "colours": list(edition.colours),
        "commands": [
            {
                "name": c.name,
                "colour": c.colour,
                "target": [e.text() for e in c.target],
                "user": [e.text() for e in c.user],
            }
            for c in edition.commands
        ],
    }


def _given_public(edition: Edition, given: tuple[Given, ...], seats: int) -> list[dict[str, Any]]:
    """How many commands each player was given, and their colours (colour order)."""
    order = {c: i for i, c in enumerate(edition.colours)}
    out = []
    for s in range(seats):
        colours = sorted((edition.colour_of(g.command) for g in given if g.target == s), key=order.__getitem__)
        out.append({"seat": s, "count": len(colours), "colours": colours})
    return out


def _given_private(edition: Edition, given: tuple[Given, ...], named: dict[str, list[int]], seat: int) -> list[dict[str, Any]]:
    """The commands given to `seat`, by name (users only where the names rule says)."""
    return [
        {
            "command": g.command,
            "colour": edition.colour_of(g.command),
            "named_users": named.get(g.command),
        }
        for g in given
        if g.target == seat
    ]


def _given_full(given: tuple[Given, ...]) -> list[dict[str, Any]]:
    return [{"command": g.command, "user": g.user, "target": g.target} for g in given]


def _learned_view(x: esc.Learned) -> dict[str, Any]:
    return {"seat": x.seat, "kind": x.kind, "about": x.about, "value": x.value, "command": x.command}


def _resolved(gs: State, event: StepResolved, viewer: Viewer) -> dict[str, Any]:
    edition = gs.edition
    n = len(event.levels_after)
    named = {x.command: list(x.users) for x in event.named}
    out: dict[str, Any] = {
        "type": "step_resolved",
        "step": event.step,
        "at": event.at,
        "fetch_round": event.fetch_round,
        "decode_round": event.decode_round,
        "executed": event.decode_round is not None,
        "given": _given_public(edition, event.given, n),
        "used": sorted({g.command for g in event.given}),
        "crowded": list(event.crowded),
        "named": [{"command": x.command, "users": list(x.users)} for x in event.named],
        "levels_before": list(event.levels_before),
        "levels": list(event.levels_after),
        "caps": list(event.caps),
        "missed": list(event.missed),
        "fell": list(event.fell),
        "third": list(event.third),
        "disabled": list(event.disabled),
    }
    if viewer.full:
        out["full"] = {
            "picks": [
                {"seat": p.seat, "command": p.command, "target": p.target, "crowded": p.crowded}
                for p in event.picks
            ],
            "given": _given_full(event.given),
            "choices": [{"seat": s, "command": c} for s, c in event.choices],
            "activated": _given_full(event.activated),
            "descent": list(event.descent),
            "points": list(event.points),
            "learned": [_learned_view(x) for x in event.learned],
        }
    seat = viewer.seat
    if seat is not None:
        pick = next((p for p in event.picks if p.seat == seat), None)
        choice = next((c for s, c in event.choices if s == seat), None)
        out["you"] = {
            "pick": None if pick is None or pick.command is None else {
                "command": pick.command, "target": pick.target, "crowded": pick.crowded,
            },
            "given": _given_private(edition, event.given, named, seat),
            "choice": choice,
            "activated_on_you": sorted(g.command for g in event.activated if g.target == seat),
            "yours_activated": any(g.user == seat for g in event.activated),
            "descent": event.descent[seat],
            "points": event.points[seat],
            "learned": [_learned_view(x) for x in event.learned if x.seat == seat],
        }
    return out


def _auto_view(event: AutoResolved) -> dict[str, Any]:
    return {
        "type": "auto_resolved",
        "from_step": event.from_step,
        "steps": event.steps,
        "levels_before": list(event.levels_before),
        "levels": list(event.levels_after),
        "falls": list(event.falls),
    }


def _game_over_view(event: GameOver) -> dict[str, Any]:
    return {
        "type": "game_over",
        "steps": event.steps,
        "survivor": event.survivor,
        "losers": list(event.losers),
        "ec": event.ec,
        "ec_by": event.ec_by,
        "points_tol": event.points_tol,
        "tol_excluded": list(event.tol_excluded),
        "fell_step": list(event.fell_step),
        "levels": list(event.levels),
        "points": list(event.points),
        "points_rank": list(event.points_rank),
        "position_rank": list(event.position_rank),
        "garnets": list(event.garnets),
        "reason": event.reason,
    }


def _started_view(event: StepStarted) -> dict[str, Any]:
    return {
        "type": "step_started",
        "step": event.step,
        "deadline": event.deadline,
        "fetch_round": event.fetch_round,
        "decode_round": event.decode_round,
        "fetchers": list(event.fetchers),
        "deciders": list(event.deciders),
    }


# --- events ----------------------------------------------------------------------------


def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
    gs: State = ms.game_state
    if isinstance(event, StepStarted):
        return _started_view(event)
    if isinstance(event, Fetched):
        if viewer.full or viewer.seat == event.seat:
            return {
                "type": "fetched", "seat": event.seat, "round": event.round,
                "command": event.command, "target": event.target,
            }
        return None
    if isinstance(event, Decoded):
        if viewer.full or viewer.seat == event.seat:
            return {"type": "decoded", "seat": event.seat, "round": event.round, "command": event.command}
        return None
    if isinstance(event, StepResolved):
        return _resolved(gs, event, viewer)
    if isinstance(event, AutoResolved):
        return _auto_view(event)
    if isinstance(event, GameOver):
        return _game_over_view(event)
    return None


# --- the view --------------------------------------------------------------------------


def _me_view(gs: State, seat: int) -> dict[str, Any]:
    p = gs.players[seat]
    named: dict[str, list[int]] = {}
    if gs.history:
        named = {x.command: list(x.users) for x in gs.history[-1].named}
    round_ = gs.fetch_round
    block: dict[str, Any] | None = None
    if round_ is not None:
        first = esc.BLOCK * esc.block_of(round_) + 1
        block = {
            "rounds": [first, first + esc.BLOCK - 1],
            "used": list(esc.colours_used(gs, seat, round_)),
            "needed": list(esc.needed_colours(gs, seat, round_)),
            "rounds_left": esc.rounds_left_in_block(round_),
        }
    targets = []
    for t in range(len(gs.players)):
        if t != seat:
            targets.append({"seat": t, "colours_used": list(esc.pair_colours(gs, seat, t))})
    learned = [
        _learned_view(x) for r in gs.history for x in r.learned if x.seat == seat
    ]
    return {
        "seat": seat,
        "level": p.level,
        "cap": p.cap,
        "points": p.points,
        "fell": p.fell,
        "must_fetch": gs.phase == "play" and seat in gs.fetchers,
        "must_decode": gs.phase == "play" and seat in gs.deciders,
        "fetch": None if p.fetch is None else {"command": p.fetch[0], "target": p.fetch[1]},
        "decode": p.decode,
        "given": _given_private(gs.edition, gs.decoding, named, seat),
        "block": block,
        "targets": targets,
        "learned": learned,
    }


def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    gs: State = ms.game_state
    n = len(gs.players)
    seat = viewer.seat
    last = gs.history[-1] if gs.history else None
    decode_info = None
    if gs.decoding or (last is not None and last.fetch_round is not None):
        decode_info = {
            "round": last.fetch_round if last is not None else None,
            "given": _given_public(gs.edition, gs.decoding, n),
            "used": sorted({g.command for g in gs.decoding}),
            "named": [{"command": x.command, "users": list(x.users)} for x in last.named] if last else [],
        }
    out: dict[str, Any] = {
        "phase": gs.phase,
        "step": gs.step,
        "deadline": gs.deadline if gs.phase == "play" else None,
        "step_ms": esc.step_ms(gs.options),
        "fetch_round": gs.fetch_round if gs.phase == "play" else None,
        "decode_round": gs.decode_round if gs.phase == "play" else None,
        "fetchers": list(gs.fetchers) if gs.phase == "play" else [],
        "deciders": list(gs.deciders) if gs.phase == "play" else [],
        "edition": _edition_view(gs.edition),
        "locks": list(esc.LOCKS),
        "players": [
            {"seat": s, "level": p.level, "cap": p.cap, "fell": p.fell}
            for s, p in enumerate(gs.players)
        ],
        "disabled": list(gs.disabled),
        "decode_info": decode_info,
        "last_step": _resolved(gs, last, viewer) if last is not None else None,
        "auto": _auto_view(gs.auto) if gs.auto is not None else None,
        "results": _game_over_view(gs.finished) if gs.finished is not None else None,
        "me": _me_view(gs, seat) if seat is not None else None,
        "full": None,
    }
    if viewer.full:
        out["full"] = {
            "points": [p.points for p in gs.players],
            "decoding": _given_full(gs.decoding),
            "pending": [
                {
                    "seat": s,
                    "fetch": None if p.fetch is None else {"command": p.fetch[0], "target": p.fetch[1]},
                    "decode": p.decode,
                }
                for s, p in enumerate(gs.players)
            ],
            "pairs": [{"user": u, "target": t, "colour": c} for u, t, c in gs.pairs],
        }
    return out


# --- replay text -----------------------------------------------------------------------


def _seat_list(seats: Any) -> str:
    seats = list(seats)
    return ", ".join(map(str, seats)) if seats else "none"


def pipeline_line(step: int, fetch_round: int | None, decode_round: int | None) -> str:
    """Which round is in Fetch, Decode and Execute in a step."""
    fetch = f"Fetch round {fetch_round}" if fetch_round is not None else "Fetch -"
    decode = f"Decode round {decode_round}" if decode_round is not None else "Decode -"
    execute = f"Execute round {decode_round}" if decode_round is not None else "Execute -"
    return f"Step {step}: {fetch} | {decode} | {execute} at the end"


def describe(ms: MatchState, event: Any) -> list[str]:
    gs: State = ms.game_state
    if isinstance(event, StepStarted):
        lines = [pipeline_line(event.step, event.fetch_round, event.decode_round)]
        lines.append(
            f"  owe a Fetch: seats {_seat_list(event.fetchers)}; owe a Decode: seats "
            f"{_seat_list(event.deciders)}; closes at {event.deadline} ms"
        )
        return lines
    if isinstance(event, Fetched):
        return [f"Round {event.round} Fetch: {who(ms, event.seat)} picks {event.command} on seat {event.target}."]
    if isinstance(event, Decoded):
        return [f"Round {event.round} Decode: {who(ms, event.seat)} activates {event.command}."]
    if isinstance(event, StepResolved):
        lines = [f"Step {event.step} closes:"]
        if event.decode_round is not None:
            lines.append(f"  Execute round {event.decode_round}:")
            for g in event.activated:
                lines.append(f"    {g.command} by seat {g.user} on seat {g.target}")
            if not event.activated:
                lines.append("    no command activates")
            for s, c in event.choices:
                lines.append(f"    seat {s} chose {c}" if c else f"    seat {s} was silent: all its commands activate")
            lines.append(
                "    levels " + " ".join(f"{s}:{a}->{b}" for s, (a, b) in enumerate(zip(event.levels_before, event.levels_after, strict=True)))
            )
            lines.append(f"    descent {list(event.descent)}; third (a point each): seats {_seat_list(event.third)}")
            lines.append(f"    points {list(event.points)}")
            for x in event.learned:
                what = f"learns seat {x.about} has {x.value} points" if x.kind == "points" else f"learns seat {x.about} used {x.command} on it"
                lines.append(f"    seat {x.seat} {what}")
        if event.missed:
            lines.append(f"  missed a Fetch (drop 2 levels): seats {_seat_list(event.missed)}")
        if event.fell:
            lines.append(f"  fell: seats {_seat_list(event.fell)}")
        if event.fetch_round is not None:
            lines.append(f"  Fetch round {event.fetch_round} revealed (Decode information):")
            for p in event.picks:
                if p.command is not None:
                    lines.append(f"    seat {p.seat}: {p.command} on seat {p.target}" + (" (crowded out)" if p.crowded else ""))
            for row in _given_public(gs.edition, event.given, len(event.levels_after)):
                if row["count"]:
                    lines.append(f"    seat {row['seat']} given {row['count']}: {', '.join(row['colours'])}")
            if event.named:
                lines.append("    named: " + "; ".join(f"{x.command} by seats {x.users[0]} and {x.users[1]}" for x in event.named))
            if event.crowded:
                lines.append(f"    disabled by three or more pickers: {', '.join(event.crowded)}")
        return lines
    if isinstance(event, AutoResolved):
        falls = ", ".join(f"seat {s} in auto step {f}" for s, f in enumerate(event.falls) if f is not None)
        return [f"Every command is disabled: auto-resolution, {event.steps} step(s) of 1 level; {falls or 'nobody falls'}."]
    if isinstance(event, GameOver):
        return [
            f"Game over after {event.steps} steps: {event.reason}.",
            f"  points {list(event.points)}; garnets {list(event.garnets)}",
        ]
    return []


# --- twin worlds (the leak property) ---------------------------------------------------

_TWIN_T0 = 10_000
_LEVEL_KINDS = ("up", "down", "shield", "swap", "redirect")


def twin_pairs(edition: Edition) -> list[tuple[str, str]]:
    """Pairs of commands of one colour whose target programs move the target alike and
    involve nobody else's level: which of two targets got which is hidden from everyone
    but the users and the targets."""
    out = []
    for i, x in enumerate(edition.commands):
        for y in edition.commands[i + 1 :]:
            if x.colour != y.colour or x.has("swap") or y.has("swap") or x.has("redirect") or y.has("redirect"):
                continue
            lx = sorted((e.kind, e.amount) for e in x.target if e.kind in _LEVEL_KINDS)
            ly = sorted((e.kind, e.amount) for e in y.target if e.kind in _LEVEL_KINDS)
            if lx == ly:
                out.append((x.name, y.name))
    return out


def _fetch(round_: int, command: str, target: int) -> dict[str, Any]:
    return {"type": "fetch", "round": round_, "command": command, "target": target}


# What stays sealed after the match: nothing. The targets, the lists and the points are
# revealed when the match ends (RULINGS.md, "After a match").
sealed = NOTHING_SEALED


def twins(variant: str, rng: Rng) -> Twins:
    """Two matches in which seats a and b use commands X and Y (one colour, the same
    levels moved) on seats c and d in round 1, crossed: a on c and b on d in one world,
    a on d and b on c in the other. Everyone else plays the same in both (random Fetches
    on anyone but c and d, Decode choices, missed steps); a and b never target c or d
    again, and no command teaches anyone the points of a, b, c or d. The public Decode
    information and every level are the same in both; only a, b, c and d may tell the
    worlds apart, and hidden points may differ."""
    seats = 4 + rng.below(5)
    order = rng.shuffle(list(range(seats)))
    a, b, c, d = order[:4]
    x, y = rng.choice(twin_pairs(PRESETS[DEFAULT_EDITION]))
    options = {"seats": seats, "clock_scale": 0.01, "early_close": rng.below(3) != 0}
    seed = bytes(rng.below(256) for _ in range(32))
    worlds = (
        Rehearsal(esc, variant, options, seed, _TWIN_T0),
        Rehearsal(esc, variant, options, seed, _TWIN_T0),
    )
    crossed = ({a: c, b: d}, {a: d, b: c})
    while not worlds[0].ms.ended and not worlds[1].ms.ended:
        ga: State = worlds[0].gs
        gb: State = worlds[1].gs
        moves: list[tuple[int, list[dict[str, Any]]]] = []  # (seat, body per world)
        if ga.step == 1:
            taken = {x, y}
            for s in rng.shuffle(list(range(seats))):
                if s in (a, b):
                    cmd = x if s == a else y
                    moves.append((s, [_fetch(1, cmd, crossed[w][s]) for w in (0, 1)]))
                    continue
                if rng.below(5) == 0:
                    continue  # a missed Fetch
                choices = [
                    (k.name, t) for k in esc.enabled(ga) for t in range(seats)
                    if k.name not in taken and t not in (c, d)
                    and not (k.has("learn_points") and {s, t} & {a, b, c, d})
                    and esc.fetch_problem(ga, s, k.name, t) is None
                ]
                if choices:
                    k, t = rng.choice(choices)
                    taken.add(k)
                    moves.append((s, [_fetch(1, k, t)] * 2))
        else:
            for s in rng.shuffle(list(range(seats))):
                if rng.below(4) == 0:
                    continue  # a missed step
                if s in ga.deciders and s in gb.deciders and ga.given_to(s) == gb.given_to(s):
                    g = rng.choice(ga.given_to(s))
                    body = {"type": "decode", "round": ga.decode_round, "command": g.command}
                    moves.append((s, [body] * 2))
                if s in ga.fetchers and s in gb.fetchers and ga.fetch_round is not None:
                    choices = [
                        (k.name, t) for k in esc.enabled(ga) for t in range(seats)
                        if not (s in (a, b) and t in (c, d))
                        and not (k.has("learn_points") and {s, t} & {a, b, c, d})
                        and esc.fetch_problem(ga, s, k.name, t) is None
                        and esc.fetch_problem(gb, s, k.name, t) is None
                    ]
                    if choices:
                        k, t = rng.choice(choices)
                        moves.append((s, [_fetch(ga.fetch_round, k, t)] * 2))
        base = worlds[0].ts
        for i, (s, bodies) in enumerate(moves):
            for w, body in zip(worlds, bodies, strict=True):
                if not w.ms.ended:
                    w.step("command", s, body, base + 1 + i)
        step_a, step_b = worlds[0].gs.step, worlds[1].gs.step
        for w in worlds:
            if not w.ms.ended and w.gs.step == ga.step:
                w.tick()
        if (worlds[0].gs.step, worlds[0].ms.ended) != (worlds[1].gs.step, worlds[1].ms.ended) and (
                step_a != step_b or worlds[0].gs.step - step_a > 1 or worlds[1].gs.step - step_b > 1):
            raise RuntimeError(f"Escalator twins: the worlds went apart ({step_a}, {step_b})")
        if worlds[0].ms.ended != worlds[1].ms.ended or (
                not worlds[0].ms.ended and (worlds[0].gs.fetchers != worlds[1].gs.fetchers
                                            or _levels(worlds[0]) != _levels(worlds[1]))):
            # Levels, the end and who owes a Fetch are public. A later command can reach a
            # player's level differently in the two worlds (a command's effect depends on
            # levels c's and d's first commands moved, or on a shield one of them left), and
            # whether a or b still has a legal Fetch may depend on which of c and d it used
            # its first command on: the rules let everyone learn that, so the comparison
            # stops before the step that shows it.
            until = tuple(_last_start(w) for w in worlds)
            return Twins(
                variant=variant, worlds=(worlds[0].world(), worlds[1].world()),
                tells=tuple(sorted((a, b, c, d))), until=(until[0], until[1]),
            )
    return Twins(variant=variant, worlds=(worlds[0].world(), worlds[1].world()), tells=tuple(sorted((a, b, c, d))))


def _levels(world: Rehearsal) -> tuple[int, ...]:
    return tuple(p.level for p in world.gs.players)


def _last_start(world: Rehearsal) -> int:
    """How many script steps come before the one that started the current step."""
    for i in range(len(world.outcomes) - 1, -1, -1):
        if any(isinstance(e, StepStarted) for e in world.outcomes[i].events):
            return i
    raise RuntimeError("Escalator twins: no step started")

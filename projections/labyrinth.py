"""What each viewer sees of a Labyrinth match (domain/games/labyrinth/game.py).

Everything the game master says is said to every player (6.2), except what rules.py
addresses to some seats or to nobody (`Event.to`): the start choices (6.1), a wounded
player's new cell (5.5), a handicap's questions (7.2), and what a dark or semi-dark move
withholds (6.7, 6.8). So:

- an event (`resolved`: one command, the opening, or a missed deadline) shows who acted
  and how, and the game master's words addressed to the viewer (everyone's, and its own);
  the cell a player chose, ordered or asked about only to that player;
- the view shows the outer shape of the labyrinth (agreed by everyone before the game),
  the turn order, whose turn it is, the round, the rounds without a change (3.6) and the
  numbers announced before the game (8.6: the moves to heal, Nstop), what everyone has
  been told of each player (playing, dead, lost, won), each player's last move as
  everyone heard it (6.3), breaks and votes (section 9); and to a player its own
  belongings and health (what it would know at the table: 6.4's status, free);
- nobody sees the plan, what lies where, or anyone's position during the match. A full
  viewer (after the match, or an auditor; the host of a plan it supplied) sees the plan
  as it is now (with the walls blown), every player, every pile, the awake mites.

Nothing stays sealed after the match (shared/RULINGS.md: the plan, positions and dark
moves are all revealed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.engine import MatchState
from domain.games.labyrinth import game as lab
from domain.games.labyrinth import rules
from domain.games.labyrinth.generate import GenerateOptions, generate
from domain.games.labyrinth.plan import Cell, Items, Land, Plan, Treasure, cell_name
from domain.games.labyrinth.plan_text import plan_to_dict, render_plan
from domain.games.labyrinth.rules import CorpseItem, Event, MineItem, TreasureItem
from domain.games.labyrinth.validate import move_result, validate
from domain.rng import Rng
from projections.contract import NOTHING_SEALED, Rehearsal, Twins, Viewer

sealed = NOTHING_SEALED


def _told(event: Event, viewer: Viewer) -> bool:
    return viewer.full or event.to is None or (viewer.seat is not None and viewer.seat in event.to)


def said_view(event: Event) -> dict[str, Any]:
    """One thing the game master said: its phrase key, the player it is about, its
    arguments and the rule book's words; `to` when it was not said to everyone."""
    out: dict[str, Any] = {"key": event.key, "seat": event.seat, "args": event.args, "text": rules.say(event)}
    if event.to is not None:
        out["to"] = list(event.to)
    return out


PRIVATE_BODY = frozenset({"start", "drawn", "order", "ask"})
"""Acts whose body (a cell) only the acting player (and a full viewer) sees."""


def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
    if not isinstance(event, lab.Resolved):
        return None
    said = [said_view(e) for e in event.said if _told(e, viewer)]
    out: dict[str, Any] = {"type": "resolved", "seat": event.seat, "act": event.act, "said": said}
    if event.act in PRIVATE_BODY:
        if viewer.full or viewer.seat == event.seat:
            out["cell"] = event.body
    elif event.act == "vote":
        out["yes"] = event.body
    return out


def _carries(item: Any) -> str | None:
    if isinstance(item, TreasureItem):
        return "treasure"
    if isinstance(item, MineItem):
        return "landmine"
    if isinstance(item, CorpseItem):
        return "corpse"
    return None


def _belongings(p: rules.Player) -> dict[str, Any]:
    return {"bullets": p.bullets, "grenades": p.grenades, "carries": _carries(p.carries)}


def _health(p: rules.Player) -> dict[str, Any]:
    return {"wounded": p.wounded, "infected": p.infected, "heal_left": p.heal_left,
            "immune": p.immune, "alive": p.alive, "lost": p.lost}


def _me(gs: lab.State, seat: int) -> dict[str, Any]:
    core = gs.core
    p = core.players[seat]
    return {
        "seat": seat,
        **_belongings(p),
        **_health(p),
        "outside": p.outside is not None,
        "may_order": p.may_order,
        "orders": p.orders,
        "extra_orders": p.extra_orders,
        "asks": p.asks,
        "asked": [list(c) for c in p.asked],
        "refused": [list(c) for c in dict(core.refused).get(seat, ())],
        "chosen": list(dict(core.choices)[seat]) if seat in dict(core.choices) else None,
        "told": [said_view(e) for e in gs.told[seat]],
    }


def _memory(memory: rules.Memory) -> dict[str, Any]:
    return {"move": memory.move, "answers": [rules.say(e) for e in memory.answers],
            "said": [said_view(e) for e in memory.answers]}


def _piles(core: rules.State) -> list[dict[str, Any]]:
    out = []
    for cell, pile in core.piles:
        entry: dict[str, Any] = {"cell": list(cell)}
        entry.update({k: v for k, v in msgspec.structs.asdict(pile).items() if v})
        for key in ("treasures", "corpses"):
            if key in entry:
                entry[key] = list(entry[key])
        out.append(entry)
    return out


def _player_full(core: rules.State, seat: int) -> dict[str, Any]:
    p = core.players[seat]
    return {
        "seat": seat,
        "cell": list(p.cell) if p.cell is not None else None,
        **_belongings(p),
        "treasure": p.carries.id if isinstance(p.carries, TreasureItem) else None,
        **_health(p),
        "outside": None if p.outside is None else {"cell": list(p.outside[0]), "side": p.outside[1]},
        "orders": p.orders,
    }


def shape(plan: Plan) -> list[list[int]]:
    """The cells of the labyrinth, without their types: its outer shape, which everyone
    agrees on before the game."""
    return [list(c) for c in sorted(plan.cells)]


def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    gs: lab.State = ms.game_state
    core = gs.core
    options = core.options
    out: dict[str, Any] = {
        "phase": core.phase,
        "round": core.round,
        "order": list(core.order),
        "to_act": rules.to_act(core) if gs.started else None,
        "deadline": lab.deadline(gs),
        "move_ms": lab.move_ms(options),
        "shape": shape(core.plan),
        "rows": max(r for r, _ in core.plan.cells),
        "columns": max(c for _, c in core.plan.cells),
        "heal_moves": options.heal_moves,
        "nstop": options.nstop if options.nstop is not None else len(core.plan.cells),
        "quiet": core.quiet,
        "players": [{"seat": s, "standing": gs.standings[s], "started_on": gs.started_on[s],
                     "moves": gs.moves[s],
                     "last_move": _memory(dict(core.last)[s]) if s in dict(core.last) else None}
                    for s in range(len(core.players))],
        "breaks": list(core.breaks),
        "votes": None if core.votes is None else {str(s): v for s, v in core.votes},
        "outcome": None if core.outcome is None else {"winner": core.outcome.winner, "reason": core.outcome.reason},
        "me": _me(gs, viewer.seat) if viewer.seat is not None else None,
        "full": None,
    }
    if viewer.full:
        out["full"] = {
            "plan": plan_to_dict(core.plan),
            "plan_text": render_plan(core.plan),
            "players": [_player_full(core, s) for s in range(len(core.players))],
            "piles": _piles(core),
            "truth": list(core.truth),
            "mites": [{"cell": list(c), "round": r, "turn": t} for c, (r, t) in core.mites],
            "choices": {str(s): list(c) for s, c in core.choices},
        }
    return out


# --- replay text -------------------------------------------------------------------------------


def _audience(e: Event) -> str:
    if e.to is None:
        return ""
    if not e.to:
        return "  [told to nobody]"
    return "  [to player " + ", ".join(str(s + 1) for s in e.to) + "]"


ACTS: Mapping[str, str] = {
    "open": "the game master opens the game",
    "move": "moves",
    "start": "chooses a start cell",
    "drawn": "did not choose in time",
    "order": "orders a new cell",
    "ask": "asks the type of a cell",
    "break": "takes a break",
    "vote": "votes",
    "missed": "did not move in time",
}


def describe(ms: MatchState, event: Any) -> list[str]:
    if not isinstance(event, lab.Resolved):
        return []
    who = "" if event.seat is None else f"player {event.seat + 1} "
    head = f"{who}{ACTS[event.act]}"
    if event.act == "move" and isinstance(event.body, dict):
        kind = event.body.get("kind")
        if kind == "status":
            head = f"{who}asks its status (6.4)"
        elif kind == "recall":
            head = f"{who}asks for player {event.body.get('player')}'s last move (6.3)"
        elif kind == "skip":
            head = f"{who}skips"
    if event.act in PRIVATE_BODY and event.body is not None:
        head += f" ({cell_name((event.body[0], event.body[1]))})"
    if event.act == "vote":
        head += f" {'yes' if event.body else 'no'}"
    return [head[0].upper() + head[1:]] + [f"  {rules.say(e)}{_audience(e)}" for e in event.said]


# --- twin worlds --------------------------------------------------------------------------------

_TWIN_T0 = 1_000_000


def _free_land(plan: Plan) -> list[Cell]:
    """Land cells with nothing lying on them."""
    busy = {t.cell for t in plan.treasures} | {i.cell for i in plan.items}
    return [c for c in sorted(plan.cells) if isinstance(plan.type_at(c), Land) and c not in busy]


def _skip_to_the_end(worlds: Sequence[Rehearsal]) -> None:
    """Every player skips in turn until the game ends in a draw (6.6)."""
    for _ in range(100):
        if all(w.ms.ended for w in worlds):
            return
        for w in worlds:
            if not w.ms.ended:
                core = w.gs.core
                w.step("command", rules.to_act(core), {"type": "move", "move": "skip"}, w.ts + 1)
    raise RuntimeError("Labyrinth twins: the skips did not end the game")


def twins(variant: str, rng: Rng) -> Twins:
    """Two matches on a host's plan drawn from `rng`, differing in one of three ways:

    - the start cell of one player (two land cells with nothing on them): only it may
      tell (6.1), until the reveal;
    - a fake treasure on a land cell next to one player's start, which it walks into in
      a dark move (6.7) and picks up in one world only: only it may tell;
    - a pile of bullets on a cell nobody ever enters: nobody may tell.

    Then everyone skips, and the game ends in a draw (6.6)."""
    kind = rng.below(3)
    players = 2 + rng.below(4)
    for _ in range(50):
        plan = generate(GenerateOptions(rows=5, columns=5, players=players), rng)
        free = _free_land(plan)
        if len(free) < players + 2:
            continue
        first = rng.below(players)
        starts = rng.shuffle(free)[:players + 1]
        plans = [plan, plan]
        choice = [list(starts), list(starts)]
        tells: tuple[int, ...] = (first,)
        dark: str | None = None
        if kind == 0:
            choice[1][first] = starts[players]
        elif kind == 1:
            home = starts[first]
            nexts = [(d, move_result(plan, home, d)) for d in ("up", "right", "down", "left")]
            targets = [(d, c) for d, c in nexts if c != home and c in free and c not in starts]
            if not targets:
                continue
            direction, target = rng.choice(targets)
            richer = msgspec.structs.replace(plan, treasures=(*plan.treasures, Treasure(target, False)))
            if validate(richer, None, players).errors:
                continue
            plans = [richer, plan]
            dark = f"go {direction}, don't tell the result"
        else:
            target = starts[players]
            if any(c == target for c in starts[:players]):
                continue
            richer = msgspec.structs.replace(plan, items=(*plan.items, Items(target, bullets=2)))
            if validate(richer, None, players).errors:
                continue
            plans = [plan, richer]
            tells = ()
        seed = bytes(rng.below(256) for _ in range(32))
        worlds = [Rehearsal(lab, variant, {"players": players, "plan": render_plan(p), "clock_scale": 0.001},
                            seed, _TWIN_T0) for p in plans]
        for w, cells in zip(worlds, choice, strict=True):
            while w.gs.core.phase == "start":
                seat = rules.to_act(w.gs.core)
                assert seat is not None
                w.step("command", seat, {"type": "start", "cell": list(cells[seat])}, w.ts + 1)
        if dark is not None:
            for w in worlds:
                while rules.to_act(w.gs.core) != first:
                    w.step("command", rules.to_act(w.gs.core), {"type": "move", "move": "skip"}, w.ts + 1)
                w.step("command", first, {"type": "move", "move": dark}, w.ts + 1)
        _skip_to_the_end(worlds)
        return Twins(variant=variant, worlds=(worlds[0].world(), worlds[1].world()), tells=tells)
    raise RuntimeError("Labyrinth twins: no plan with room for them in 50 draws")


"""The Labyrinth game master: the state of a match and the resolution of each command.

Pure functions over a frozen `State`: `start_game(plan, seats, options, rng)` opens a
match, `choose_start(state, seat, cell)` takes the secret start choices (6.1),
`order_cell(state, seat, cell)` a wounded player's order of a new cell (5.5) or a
handicap's (7.2), `ask_cell` a handicap's question before the start (7.2),
`play(state, seat, command)` resolves one `moves.Command` (a move, a skip, a status
question or a recall), and `miss_move`, `take_break` and `vote_break` are section 9's.
Each returns the new state and the events the game master says, or raises `RuleError`
(a refusal: nothing changes, the sender is told why). Events are
structured (`Event`: a phrase key from `PHRASES`, whose text is the rule book's own
phrasing, the arguments, and the audience: everyone, some seats, or nobody) so a frontend
can phrase them its own way; `say(event)` renders the rule book's words.

Implemented (section B of the rule book, as ruled in shared/RULINGS.md and
docs/rules/labyrinth.md, "The game master"):
- the start (6.1, 6.2): turn order drawn from the seed; secret start choices in that
  order, rejected without a reason only by the match's rules (options `river_starts`,
  `shared_starts`), a rejected player choosing again a cell it has not chosen before;
  option 7.6 (`common_start`: everyone on the plan's start cell, without bullets and
  grenades); then each player's cell type said in public, and what lies there found;
- moves of exactly one movement with actions before and after it, in the order given,
  and the conditional actions of 6.5 after them;
- walking, walls (either kind, never told apart) and exits: walking out through an open
  exit; with the true treasure the player wins (3.2); with a fake one it crumbles
  (3.4), and without it the player is outside too, and must come back in through the
  same exit with its next move or lose (3.4);
- rivers and deltas (4.5, 4.6): carried one cell on walking in, moving upstream leaves
  the player in place with the same words, carried after hitting a wall in a river,
  going by the flow; pits (4.4): several loops, arrival picks up the items of the
  arrival pit only, going by the loop, a wall hit in a pit moves nobody;
- hospitals (4.2: heal the wounded and infected, confiscate corpses, no shooting from
  or through them) and weaponries (4.3: bullets and grenades refilled to 3; no shooting
  from or through them);
- items (5.1-5.3): picking up everything one can carry on arrival (bullets and grenades
  to 3, one treasure, landmine or corpse, the less valuable exchanged for the more
  valuable, the old treasure kept); leaving and throwing items (into a wall: at the
  player's feet; out of the labyrinth: gone; a true treasure thrown out or onto a river
  source: draw); several treasures on one cell named lowest ... topmost, and the choice
  (`Take`);
- bullets (5.5): flight until a wall, hospital, weaponry or player; every other player
  on the shooter's cell wounded; a fallen player not hit again before its own turn;
  items of a player wounded on the shooter's cell caught on the fly; bullets on the
  ground picked up after a shot (the 6.5 example);
- grenades (5.4, option 7.8 `blow_report`);
- wounds and death (5.5, 5.6): a wounded player drops all but its grenades; a second hit
  kills; the corpse; the N-1 cell orders on the turn after the wound (`reorders`);
- landmines (5.7, option `landmines`): setting (across a wall: at the player's feet,
  unsaid; out of the labyrinth, in a hospital or weaponry: defused), throwing
  unactivated, the blast on arrival from another cell or by a thrown corpse, destroying
  bullets and landmines; option 7.5 (`mine_reorder`);
- encephalitis (4.7, option `heal_moves`): the mite woken by the first arrival, the
  cell contagious from the waker's next turn, infection (items but grenades dropped),
  death of an infected player when wounded or when its successful moves run out,
  healing and immunity in a hospital, contagious corpses an immune player may carry;
- the kill win (3.5, option 7.9 `survivor_moves`), the Nstop draw (3.6, announced each
  round without a change), all players skipping (6.6), skips forbidden (7.7 `skips`);
- status (6.4), recall of a player's last move (6.3), dark and semi-dark moves (6.7,
  6.8) as event audiences;
- option 7.3: `shooting_range`, `damp_powder`, `shoot_through`, `named_target`;
- the bans of 7.1 (`conditional_moves`, `dark_moves`, `semi_dark_moves`, `throwing`,
  `mine_on_neighbour`) and 7.7's ban on repeating a move everyone heard change nothing
  (`repeats`);
- option 7.2's handicaps (`handicaps`: cell types asked before the start with
  `ask_cell`, the start then among them; cell orders without a wound, leaving bullets
  and what the player carries behind);
- option 7.4 (`rivers`: deep, shallow or turbulent) and landmines in weaponries
  (`weaponry_landmines`, 4.3's variation);
- section 9's rules (`miss_move`: a move not made in time loses the game, or is a skip
  under `missed_move`; `take_break`: one break each until half the players, and two at
  least, have had one; `vote_break`: a break by majority vote, a tie granting it).

The match around these rules (the clocks, the options in a match, one event a command) is
game.py; what each viewer sees is projections/labyrinth.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import msgspec

from domain.contract import OptionsError
from domain.games.labyrinth.generate import GenerateOptions, generate
from domain.games.labyrinth.moves import (
    Action,
    Blow,
    Command,
    Leave,
    MoveError,
    SetMine,
    Shoot,
    Take,
    Throw,
    check_command,
    render_action,
    render_command,
    treasure_place,
)
from domain.games.labyrinth.plan import (
    OPPOSITE,
    Cell,
    Delta,
    Direction,
    Encephalitis,
    Hospital,
    Land,
    Pit,
    Plan,
    River,
    Side,
    Weaponry,
    cell_name,
    step,
)
from domain.games.labyrinth.plan_text import render_plan
from domain.games.labyrinth.validate import PLAN_OPTIONS, PlanOptions, river_sources
from domain.kit.options import Boolean, ClockScale, Custom, Integer, OptionTable
from domain.rng import Rng

MAX = 3
"""The most bullets and the most grenades a player carries (4.3, 5.1, 5.3)."""

# --- options -------------------------------------------------------------------------------

BlowReport = Literal["grenades", "missing", "all"]
BLOW_REPORTS: tuple[str, ...] = ("grenades", "missing", "all")


class Handicap(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Option 7.2 for one player (numbered from 1): the types of `cells` cells asked before
    the start, its start then chosen among them; `orders` cell orders without a wound."""

    player: int
    cells: int = 0
    orders: int = 0


def _handicaps(value: Any, variant: str) -> tuple[Handicap, ...]:
    try:
        found = msgspec.convert(value, tuple[Handicap, ...])
    except msgspec.ValidationError as exc:
        raise OptionsError(f"a list of {{player, cells, orders}}: {exc}") from None
    players = [h.player for h in found]
    if len(set(players)) != len(players):
        raise OptionsError("one entry a player")
    for h in found:
        if not 1 <= h.player <= 6 or not 0 <= h.cells <= 100 or not 0 <= h.orders <= 100:
            raise OptionsError("player is 1 to 6, cells and orders 0 to 100")
    return found


class Options(PlanOptions, frozen=True, kw_only=True):
    """The match options the game master plays by: the plan's (validate.PlanOptions, of
    which `landmines`, `heal_moves` and `nstop` concern the game itself; see
    validate.PLAN_OPTIONS) and section 7's."""

    variant: str = "labyrinth"
    # the match (the hosted game's: game.py)
    players: int = 3
    rows: int = 5
    columns: int = 5
    plan: str | None = None
    """A host's own plan (the text format); None: drawn from the match's seed."""
    clock_scale: float = 1.0
    # the game (6.1, 5.5, section 7)
    river_starts: bool = False
    shared_starts: bool = False
    common_start: bool = False
    reorders: int | None = None
    shooting_range: int | None = None
    damp_powder: bool = False
    shoot_through: bool = False
    mine_reorder: bool = True
    skips: bool = True
    blow_report: str = "grenades"
    survivor_moves: int | None = None
    repeats: bool = True
    conditional_moves: bool = True
    dark_moves: bool = True
    semi_dark_moves: bool = True
    throwing: bool = True
    mine_on_neighbour: bool = True
    move_seconds: int = 60
    missed_move: str = "lose"
    break_seconds: int = 300
    rivers: str = "deep"
    weaponry_landmines: bool = False
    named_target: bool = False
    handicaps: tuple[Handicap, ...] = ()


MISSED_MOVES: tuple[str, ...] = ("lose", "skip")
RIVERS: tuple[str, ...] = ("deep", "shallow", "turbulent")


def _rivers(value: Any, variant: str) -> str:
    if value not in RIVERS:
        raise OptionsError(f"must be one of {', '.join(map(repr, RIVERS))}")
    return str(value)



def _missed_move(value: Any, variant: str) -> str:
    if value not in MISSED_MOVES:
        raise OptionsError(f"must be one of {', '.join(map(repr, MISSED_MOVES))}")
    return str(value)


def _blow_report(value: Any, variant: str) -> str:
    if value not in BLOW_REPORTS:
        raise OptionsError(f"must be one of {', '.join(map(repr, BLOW_REPORTS))}")
    return str(value)


GAME_OPTIONS = (
    Boolean("river_starts", False, "a start chosen in a river cell is accepted (6.1; default: rejected)"),
    Boolean("shared_starts", False,
            "two players may start on one cell (6.1; default: the later choice is rejected)"),
    Boolean("common_start", False,
            "everyone starts on the plan's start cell, without bullets and grenades (7.6)"),
    Integer("reorders", None, 0, 100,
            "cell orders each player has after wounds (5.5; null: the number of players less one)",
            nullable=True),
    Integer("shooting_range", None, 1, 100, "the cells a bullet flies at most (7.3; null: no limit)",
            nullable=True),
    Boolean("damp_powder", False, "no shooting from a river cell (7.3)"),
    Boolean("shoot_through", False, "bullets fly through weaponries and hospitals (7.3)"),
    Boolean("mine_reorder", True, "a player wounded by a landmine may order a new cell (7.5)"),
    Boolean("skips", True, "a player may skip its move (6.6, 7.7)"),
    Custom("blow_report", "grenades",
           "what a grenade's thrower is told (7.8): 'grenades' only the grenades left (5.4), "
           "'missing' also that there was no wall, 'all' also whether the wall was blown up or stayed",
           type="string", parse=_blow_report, schema={"enum": list(BLOW_REPORTS)}),
    Integer("survivor_moves", None, 1, 10_000,
            "moves the last survivor has to carry the true treasure out (7.9; null: it wins at once)",
            nullable=True),
    Boolean("repeats", True,
            "a player may repeat its last move when everyone heard that it changed nothing (7.7)"),
    Boolean("conditional_moves", True, "conditional moves are allowed (6.5, 7.1)"),
    Boolean("dark_moves", True, "dark moves are allowed (6.7, 7.1)"),
    Boolean("semi_dark_moves", True, "semi-dark moves are allowed (6.8, 7.1)"),
    Boolean("throwing", True, "items may be thrown onto a neighbouring cell, not only left (7.1)"),
    Boolean("mine_on_neighbour", True, "a landmine may be set on a neighbouring cell (7.1)"),
    Integer("move_seconds", 60, 1, 86_400, "seconds a player has to make its move (section 9)"),
    Integer("break_seconds", 300, 1, 86_400,
            "seconds of the break a player may take before its move (section 9)"),
    Custom("rivers", "deep",
           "'deep' rivers carry a player one cell (4.6); 'shallow' ones only when it steps in, "
           "or across the flow (7.4); 'turbulent' ones carry it to the delta at once (7.4)",
           type="string", parse=_rivers, schema={"enum": list(RIVERS)}),
    Boolean("named_target", False,
            "a shot names its target, a player and its cell, and hits nobody else (7.3)"),
    Custom("handicaps", (),
           "handicaps (7.2): for a player (numbered from 1), the types of `cells` cells it may ask "
           "before the start, its start then among them, and `orders` cell orders without a wound",
           type="array", parse=_handicaps,
           schema={"items": {"type": "object", "properties": {
               "player": {"type": "integer", "minimum": 1, "maximum": 6},
               "cells": {"type": "integer", "minimum": 0, "maximum": 100},
               "orders": {"type": "integer", "minimum": 0, "maximum": 100}},
               "required": ["player"], "additionalProperties": False},
               "examples": [[{"player": 2, "cells": 3, "orders": 1}]]}),
    Boolean("weaponry_landmines", False,
            "a weaponry gives a landmine to a player with nothing in its hands (4.3, 'some game variations')"),
    Custom("missed_move", "lose",
           "a move not made in time (section 9): 'lose' (the player is out, its corpse and items "
           "stay where it stood) or 'skip'",
           type="string", parse=_missed_move, schema={"enum": list(MISSED_MOVES)}),
)



def _plan_text(value: Any, variant: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OptionsError("a plan in the text format of docs/rules/labyrinth.md")
    if len(value) > MAX_PLAN_TEXT:
        raise OptionsError(f"a plan text is at most {MAX_PLAN_TEXT} characters")
    return value


MAX_PLAN_TEXT = 100_000
EXAMPLE_PLAN = render_plan(generate(GenerateOptions(rows=4, columns=4, players=3), Rng(b"example plan")))
"""A plan a host could give (the schema's example of option `plan`): drawn once, the same
on every machine."""
MATCH_OPTIONS = (
    Integer("players", 3, 2, 5, "players in the match (the game master is the computer)"),
    Integer("rows", 5, 3, 30, "rows of a generated plan (section 7; not used with a host's plan)"),
    Integer("columns", 5, 3, 30, "columns of a generated plan (section 7; not used with a host's plan)"),
    Custom("plan", None,
           "a host's own plan, in the text format of docs/rules/labyrinth.md, validated against "
           "section 8 and the match's limits (null: drawn from the match's seed); secret: it "
           "goes into the committed setup and is revealed when the match ends",
           type="string", nullable=True, parse=_plan_text,
           schema={"examples": [EXAMPLE_PLAN]}),
    ClockScale(),
)

OPTIONS: OptionTable[Options] = OptionTable(
    Options, ("labyrinth",), (*MATCH_OPTIONS, *PLAN_OPTIONS, *GAME_OPTIONS))


# --- items, players, cells -----------------------------------------------------------------


class TreasureItem(msgspec.Struct, frozen=True, tag="treasure"):
    id: int
    """The treasure's number: its place in the plan's treasures."""


class CorpseItem(msgspec.Struct, frozen=True, tag="corpse"):
    seat: int


class MineItem(msgspec.Struct, frozen=True, tag="landmine"):
    pass


Big = TreasureItem | CorpseItem | MineItem
"""What a player carries one of at most (5.1): a treasure, a corpse or a landmine."""
RANK: Mapping[type, int] = {CorpseItem: 1, MineItem: 2, TreasureItem: 3}


class Player(msgspec.Struct, frozen=True):
    seat: int
    cell: Cell | None = None
    bullets: int = MAX
    grenades: int = MAX
    carries: Big | None = None
    wounded: bool = False
    infected: bool = False
    heal_left: int | None = None
    immune: bool = False
    alive: bool = True
    lost: bool = False
    fallen: bool = False
    """Wounded since its last turn: bullets pass over it (5.5)."""
    may_order: bool = False
    """May order a new cell on this turn (wounded since its last turn, orders left)."""
    orders: int = 0
    outside: tuple[Cell, Direction] | None = None
    """Walked out through this exit and must come back with its next move (3.4)."""
    death_told: bool = False
    asks: int = 0
    """Cell types it may still ask before the start (7.2)."""
    asked: tuple[Cell, ...] = ()
    extra_orders: int = 0
    """Cell orders without a wound left (7.2)."""

    @property
    def in_play(self) -> bool:
        return self.alive and not self.lost


class Pile(msgspec.Struct, frozen=True):
    """What lies on a cell. `treasures` lowest first; `armed` landmines are invisible."""

    bullets: int = 0
    grenades: int = 0
    landmines: int = 0
    armed: int = 0
    treasures: tuple[int, ...] = ()
    corpses: tuple[int, ...] = ()


EMPTY = Pile()


class Outcome(msgspec.Struct, frozen=True):
    """How the match ended: the winner's seat or None (a draw), and why."""

    winner: int | None
    reason: Literal["treasure", "kill", "nstop", "skips", "treasure_lost", "no_survivor", "survivor_failed"]


class Event(msgspec.Struct, frozen=True, omit_defaults=True):
    """One thing the game master says: `key` in PHRASES, about `seat`'s move or state,
    with `args`; `to` is None for everyone, else the seats told (() tells nobody: done
    and recorded, but withheld, as in a dark move)."""

    key: str
    seat: int | None = None
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    to: tuple[int, ...] | None = None


class Memory(msgspec.Struct, frozen=True):
    """A player's last move as everyone heard it (6.3)."""

    move: str
    answers: tuple[Event, ...]


class State(msgspec.Struct, frozen=True):
    options: Options
    plan: Plan
    """The plan as it is now: with the walls blown so far."""
    players: tuple[Player, ...]
    order: tuple[int, ...]
    truth: tuple[bool, ...]
    """Whether each treasure (by id) is the true one."""
    piles: tuple[tuple[Cell, Pile], ...]
    """What lies on each cell that has something, by cell (`pile(cell)` reads it)."""
    phase: Literal["start", "play", "over"] = "start"
    turn: int = 0
    """The index in `order` of the seat to play (or to choose its start cell)."""
    round: int = 1
    mites: tuple[tuple[Cell, tuple[int, int]], ...] = ()
    """Encephalitis cells whose mite is awake: contagious from (round, turn index)."""
    quiet: int = 0
    """Rounds in a row without an irreversible change (3.6)."""
    changed: bool = False
    """An irreversible change in the current round."""
    skips: int = 0
    """Skips in a row (6.6)."""
    survivor_left: int | None = None
    """Under option 7.9, the moves the last survivor has left."""
    last: tuple[tuple[int, Memory], ...] = ()
    """Each seat's last move (6.3), by seat."""
    choices: tuple[tuple[int, Cell], ...] = ()
    refused: tuple[tuple[int, tuple[Cell, ...]], ...] = ()
    breaks: tuple[int, ...] = ()
    """The seats that took a break since half the players last had one (section 9)."""
    votes: tuple[tuple[int, bool], ...] | None = None
    """A break put to the vote: each seat's vote so far (section 9); None: no vote open."""
    outcome: Outcome | None = None

    def seat_to_play(self) -> int | None:
        return None if self.phase == "over" else self.order[self.turn]

    def pile(self, cell: Cell) -> Pile:
        return dict(self.piles).get(cell, EMPTY)


class RuleError(ValueError):
    """A command the rules refuse; nothing changes. `code` for programs, the message for people."""

    def __init__(self, code: str, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(reason)


# --- the words -----------------------------------------------------------------------------

PHRASES: Mapping[str, str] = {
    # the start
    "turn_order": "The order of play: {players}",
    "choose_start": "Player {player}, choose your start cell",
    "start_chosen": "Player {player} has chosen a start cell",
    "start_cell": "You start at {cell}",
    "start_rejected": "Your choice is invalid: choose another cell",
    "start_drawn": "Player {player} did not choose in time: the game master draws its start cell",
    "start_on": "Player {player} starts on {where}",
    # turns
    "turn": "Player {player}'s turn",
    "wounded_may_order": "Player {player} is wounded and can ask for a new cell",
    "wounded_no_order": "Player {player} is wounded",
    "dead": "Player {player} is dead",
    "ordered_cell": "Player {player} ordered a new cell",
    "new_cell": "You continue from {cell}",
    "cell_rejected": "That cell is invalid: choose another",
    "asked_cell": "Player {player} asked the type of a cell",
    "cell_type": "Cell {cell} is {where}",
    "move": "Player {player}: {move}",
    "dark_done": "{move} - done.",
    "semi_wall": "You've hit a wall.",
    "semi_no_wall": "No wall hit.",
    "skip": "Player {player} skips the move",
    "timed_out": "Player {player} did not move in time and has lost",
    "break": "Player {player} takes a break of {seconds} seconds",
    "break_proposed": "Player {player} proposes a break: vote yes or no",
    "break_vote": "Player {player} votes {vote}",
    "break_agreed": "The players agree: a break of {seconds} seconds",
    "break_refused": "The players do not agree: no break",
    # the movement (2.2, 4.1-4.7)
    "land": "Walked onto land",
    "hospital": "Walked into a hospital",
    "weaponry": "Walked into a weaponry, you have {bullets} bullets and {grenades} grenades",
    "pit": "Walked into a pit",
    "river": "Walked into a river, carried by the flow",
    "river_delta": "Walked into a river, carried by the flow to a delta",
    "flow_river": "Walked by the flow into a river",
    "flow_delta": "Walked by the flow into a delta",
    "loop": "Walked by the loop into the next pit",
    "delta": "Walked into a delta",
    "mite_woken": "Arrived at the encephalitis cell, woke up the mite",
    "encephalitis": "Arrived at the encephalitis cell",
    "wall": "Cannot move - hit a wall",
    "wall_river": "Cannot move in that direction - hit a wall; carried by the flow to a river",
    "wall_delta": "Cannot move in that direction - hit a wall; carried by the flow to a delta",
    "not_in_river": "Cannot move by the flow - not in a river",
    "not_in_pit": "Cannot move by the loop - not in a pit",
    "by_river": "Walked by the river",
    "river_against": "Failed, a river is flowing this way",
    "out": "Walked out of the labyrinth",
    "crumbled": "The treasure crumbled to ashes; return to the labyrinth with the next move",
    "must_return": "Return to the labyrinth with the next move",
    "returned": "Returned into the labyrinth",
    "lost_outside": "Failed to return to the labyrinth: player {player} has lost",
    "won_treasure": "Walked out with the true treasure: player {player} wins!",
    # consequences
    "found": "found {things}",
    "picked": "You picked up {things}",
    "healed": "was healed",
    "immune": "is immune to encephalitis from now on",
    "confiscated": "the corpse was confiscated and cremated",
    "infected": "You have been infected and have {moves} moves to heal",
    "infected_unlimited": "You have been infected; find a hospital",
    "died_of_infection": "Player {player} died of encephalitis",
    "mine_blast": "A landmine blew up!",
    "scream": "A scream is heard!",
    "no_scream": "No scream is heard",
    # actions
    "shot": "shoot {direction} - {bullets_left} left, {ground_words} on the ground",
    "no_bullets": "shoot {direction} - no luck, you have no bullets",
    "cannot_shoot": "shoot {direction} - not allowed: {why}",
    "blow": "blow the {direction} wall - {grenades_left} left",
    "no_grenades": "blow the {direction} wall - no luck, you have no grenades",
    "wall_blown": "the wall was blown up",
    "wall_stayed": "the wall stayed",
    "no_wall_there": "there was no wall",
    "leave": "{action} - done",
    "throw": "{action} - done",
    "at_feet": "{action} - you have found {things} at your feet",
    "thrown_out": "{action} - out of the labyrinth",
    "set_mine": "set the mine - done",
    "defused": "set the mine - defused",
    "not_carried": "{action} - no luck, you have none",
    "cannot_carry": "{action} - not allowed: {why}",
    "take": "took the {which} treasure",
    "keep": "kept the old treasure",
    "no_such_treasure": "{action} - there is no such treasure here",
    # queries
    "status": "Player {player}: {status}",
    "recall": "Player {player}'s last move: {move} - {answers}",
    "recall_none": "Player {player} has made no move yet",
    # the end
    "quiet": "{rounds_words} with no changes",
    "draw_nstop": "{rounds_words} with no changes - game ends with a draw!",
    "draw_skips": "All players skipped their moves: the game is a draw",
    "draw_treasure_lost": "The true treasure is lost: the game is a draw",
    "won_kill": "Player {player} is the last one alive and wins",
    "survivor": "Player {player} is the last one alive and has {moves} moves to carry the true treasure out",
    "survivor_failed": "Player {player} did not carry the true treasure out in time: the game is a draw",
    "no_survivor": "Nobody is left alive: the game is a draw",
}

WHERE: Mapping[type, str] = {
    Land: "land", Hospital: "a hospital", Weaponry: "a weaponry", Pit: "a pit",
    River: "a river", Delta: "a delta", Encephalitis: "an encephalitis cell",
}
_NUMBER = {0: "no", 1: "one", 2: "two", 3: "three"}


def count_words(n: int, item: str) -> str:
    """'no bullets', 'one bullet', 'three grenades'."""
    return f"{_NUMBER.get(n, str(n))} {item if n == 1 else item + 's'}"


def things(counts: Mapping[str, int]) -> str:
    """'a treasure, two bullets and a corpse' from counts by item name."""
    parts = []
    for item in ("treasure", "bullet", "grenade", "landmine", "corpse"):
        n = counts.get(item, 0)
        if n == 1:
            parts.append(f"a {item}")
        elif n > 1:
            parts.append(f"{_NUMBER.get(n, str(n))} {item}s")
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def say(event: Event) -> str:
    """The event in the rule book's words."""
    args = dict(event.args)
    if "player" not in args and event.seat is not None:
        args["player"] = event.seat + 1
    for key in ("things",):
        if isinstance(args.get(key), dict):
            args[key] = things(args[key])
    if isinstance(args.get("bullets"), int):
        args["bullets_left"] = count_words(args["bullets"], "bullet")
    if isinstance(args.get("grenades"), int):
        args["grenades_left"] = count_words(args["grenades"], "grenade")
    if isinstance(args.get("ground"), int):
        args["ground_words"] = "none" if args["ground"] == 0 else _NUMBER.get(args["ground"], str(args["ground"]))
    if isinstance(args.get("rounds"), int):
        n = args["rounds"]
        args["rounds_words"] = count_words(n, "round").capitalize()
    if event.key == "recall" and isinstance(args.get("answers"), list):
        args["answers"] = ", ".join(args["answers"])
    return PHRASES[event.key].format(**args)


# --- starting ------------------------------------------------------------------------------


def configure(options: Mapping[str, Any]) -> Options:
    return OPTIONS.configure("labyrinth", options)


def start_game(plan: Plan, seats: int, options: Options, rng: Rng) -> tuple[State, tuple[Event, ...]]:
    """A match on `plan` for `seats` players: the turn order drawn from `rng`, then the
    start choices (6.1), or everyone on the plan's start cell under option 7.6."""
    if not 1 <= seats <= 6:
        raise RuleError("bad_players", "Labyrinth is played by 1 to 6 players")
    if options.common_start and plan.start is None:
        raise RuleError("no_start_cell", "option common_start needs a plan with a start cell")
    order = tuple(rng.shuffle(range(seats)))
    orders = options.reorders if options.reorders is not None else seats - 1
    mine: Big | None = MineItem() if options.landmines else None
    handicap = {h.player - 1: h for h in options.handicaps}
    if any(s >= seats for s in handicap):
        raise RuleError("bad_handicap", "a handicap is given to a player who is not in the match")
    players = tuple(
        Player(seat, carries=mine, orders=orders,
               asks=handicap[seat].cells if seat in handicap and not options.common_start else 0,
               extra_orders=handicap[seat].orders if seat in handicap else 0)
        for seat in range(seats))
    piles: dict[Cell, Pile] = {}
    for i, treasure in enumerate(plan.treasures):
        piles[treasure.cell] = Pile(treasures=(i,))
    for items in plan.items:
        base = piles.get(items.cell, EMPTY)
        piles[items.cell] = msgspec.structs.replace(
            base, bullets=items.bullets, grenades=items.grenades, landmines=items.landmines)
    state = State(options=options, plan=plan, players=players, order=order,
                  truth=tuple(t.is_true for t in plan.treasures), piles=pairs(piles))
    said = [Event("turn_order", args={"players": ", ".join(str(s + 1) for s in order)})]
    if options.common_start:
        assert plan.start is not None
        state = msgspec.structs.replace(state, players=tuple(
            msgspec.structs.replace(p, cell=plan.start, bullets=0, grenades=0) for p in players))
        state, more = _begin(state)
        return state, (*said, *more)
    said.append(Event("choose_start", order[0]))
    return state, tuple(said)


def choose_start(state: State, seat: int, cell: Cell) -> tuple[State, tuple[Event, ...]]:
    """A player's secret start choice (6.1), in turn order. When every player has chosen,
    the choices the match's rules reject are sent back, without a reason, to be chosen
    again; when none is, the game starts (6.2)."""
    if state.phase != "start":
        raise RuleError("not_choosing", "the start cells are chosen already")
    waiting = _waiting(state)
    if seat != waiting[0]:
        raise RuleError("not_your_turn", f"player {waiting[0] + 1} chooses now")
    cell = (int(cell[0]), int(cell[1]))
    if cell not in state.plan:
        raise RuleError("not_a_cell", f"{cell_name(cell)} is not a cell of the labyrinth")
    if cell in dict(state.refused).get(seat, ()):
        raise RuleError("chosen_before", f"{cell_name(cell)} was chosen before: choose a new cell")
    asked = state.players[seat].asked
    if asked and cell not in asked:
        raise RuleError("not_asked", "after asking cell types, the start is one of the cells asked (7.2)")
    choices = {**dict(state.choices), seat: cell}
    state = msgspec.structs.replace(state, choices=pairs(choices))
    said = [Event("start_chosen", seat), Event("start_cell", seat, {"cell": cell_name(cell)}, to=(seat,))]
    if len(waiting) > 1:
        return state, (*said, Event("choose_start", waiting[1]))
    # every player has chosen: check the choices in turn order
    refused: dict[int, tuple[Cell, ...]] = dict(state.refused)
    kept: dict[int, Cell] = {}
    again: list[int] = []
    taken: set[Cell] = set()
    for s in state.order:
        chosen = choices[s]
        bad = (not state.options.river_starts and isinstance(state.plan.type_at(chosen), River)) or (
            not state.options.shared_starts and chosen in taken)
        if bad:
            again.append(s)
            refused[s] = (*refused.get(s, ()), chosen)
        else:
            kept[s] = chosen
            taken.add(chosen)
    if again:
        state = msgspec.structs.replace(state, choices=pairs(kept), refused=pairs(refused))
        said += [Event("start_rejected", s, to=(s,)) for s in again]
        said.append(Event("choose_start", _waiting(state)[0]))
        return state, tuple(said)
    players = tuple(msgspec.structs.replace(p, cell=choices[p.seat]) for p in state.players)
    state, more = _begin(msgspec.structs.replace(state, players=players, choices=(), refused=()))
    return state, (*said, *more)


def to_act(state: State) -> int | None:
    """The seat the game waits for: the next to choose its start cell, or to play; None
    once the game is over."""
    if state.phase == "start":
        return _waiting(state)[0]
    return state.seat_to_play()


def start_candidates(state: State, seat: int) -> list[Cell]:
    """The cells `seat` may still choose as its start that the match's rules accept now
    (6.1): for a start the game master draws when the player did not choose in time."""
    asked = state.players[seat].asked
    taken = set(dict(state.choices).values())
    found = []
    for cell in sorted(asked or state.plan.cells):
        if cell in dict(state.refused).get(seat, ()):
            continue
        if not state.options.river_starts and isinstance(state.plan.type_at(cell), River):
            continue
        if not state.options.shared_starts and cell in taken:
            continue
        found.append(cell)
    return found or sorted(c for c in (asked or state.plan.cells) if c not in dict(state.refused).get(seat, ()))


def _waiting(state: State) -> list[int]:
    chosen = dict(state.choices)
    return [s for s in state.order if s not in chosen]


def _begin(state: State) -> tuple[State, tuple[Event, ...]]:
    """Every player on its cell: each one's cell type said (6.2), what lies there found."""
    work = _Work(state)
    for index, seat in enumerate(state.order):
        work.turn = index  # a mite woken at the start counts from its waker's turn (4.7)
        player = work.players[seat]
        assert player.cell is not None
        kind = state.plan.type_at(player.cell)
        work.say("start_on", seat, where=WHERE[type(kind)])
        work.arrive(seat, player.cell, blast=False, words=False)
    work.phase = "play"
    work.turn = 0
    work.announce_turn()
    return work.freeze()


# --- a turn ----------------------------------------------------------------------------------


def order_cell(state: State, seat: int, cell: Cell | None) -> tuple[State, tuple[Event, ...]]:
    """A wounded player's order of a new cell, on the turn after its wound (5.5), before its
    move; None declines. The cell is told to nobody else; a river cell is rejected without
    a reason (as a start choice is) unless the match accepts river starts."""
    _check_turn(state, seat)
    player = state.players[seat]
    extra = not player.may_order
    if extra and (player.extra_orders == 0 or cell is None):
        raise RuleError("no_order", "a new cell is ordered only on the turn after a wound, "
                        "with orders left, or with a handicap's order (7.2)")
    if player.outside is not None:
        raise RuleError("outside", "you are outside: come back in through the exit you left by")
    if cell is None:
        players = _replace_player(state.players, seat, may_order=False)
        return msgspec.structs.replace(state, players=players), ()
    cell = (int(cell[0]), int(cell[1]))
    if cell not in state.plan:
        raise RuleError("not_a_cell", f"{cell_name(cell)} is not a cell of the labyrinth")
    if not state.options.river_starts and isinstance(state.plan.type_at(cell), River):
        return state, (Event("cell_rejected", seat, to=(seat,)),)
    work = _Work(state)
    if extra:  # without a wound: bullets, treasure, landmine and corpse stay behind (7.2)
        assert player.cell is not None
        work.drop(player.cell, player.carries, bullets=player.bullets)
        work.set(seat, carries=None, bullets=0, extra_orders=player.extra_orders - 1, cell=cell)
    else:
        work.set(seat, cell=cell, may_order=False, orders=player.orders - 1)
    work.say("ordered_cell", seat)
    work.say("new_cell", seat, to=(seat,), cell=cell_name(cell))
    return work.freeze()


def ask_cell(state: State, seat: int, cell: Cell) -> tuple[State, tuple[Event, ...]]:
    """A handicap's question before the start (7.2): the type of a cell, told to the asker
    alone; its start is then one of the cells it asked."""
    if state.phase != "start":
        raise RuleError("not_choosing", "cell types are asked before the start")
    player = state.players[seat]
    if player.asks == 0:
        raise RuleError("no_asks", "you have no cell types left to ask")
    cell = (int(cell[0]), int(cell[1]))
    if cell not in state.plan:
        raise RuleError("not_a_cell", f"{cell_name(cell)} is not a cell of the labyrinth")
    kind = state.plan.type_at(cell)
    players = _replace_player(state.players, seat, asks=player.asks - 1, asked=(*player.asked, cell))
    return msgspec.structs.replace(state, players=players), (
        Event("asked_cell", seat),
        Event("cell_type", seat, {"cell": cell_name(cell), "where": WHERE[type(kind)]}, to=(seat,)))


def play(state: State, seat: int, command: Command) -> tuple[State, tuple[Event, ...]]:
    """One command of `seat`: status and recall are answered at any time and cost nothing;
    a skip or a move is the seat's turn."""
    if not 0 <= seat < len(state.players):
        raise RuleError("no_such_player", f"there is no seat {seat}")
    try:
        check_command(command)
    except MoveError as exc:
        raise RuleError("bad_move", str(exc)) from None
    if command.kind == "status":
        return state, (status_event(state, seat),)
    if command.kind == "recall":
        assert command.player is not None
        target = command.player - 1
        if not 0 <= target < len(state.players):
            raise RuleError("no_such_player", f"there is no player {command.player}")
        memory = dict(state.last).get(target)
        if memory is None:
            return state, (Event("recall_none", target),)
        return state, (Event("recall", target, {"move": memory.move,
                                                "answers": [say(e) for e in memory.answers]}),)
    _check_turn(state, seat)
    if command.kind == "skip":
        if not state.options.skips:
            raise RuleError("no_skips", "skipping a move is not allowed in this match (7.7)")
        if state.players[seat].outside is not None:
            raise RuleError("outside", "you are outside: come back in through the exit you left by")
        return _skip(state, seat)
    _check_allowed(state, seat, command)
    work = _Work(state)
    work.skips = 0
    work.move(seat, command)
    if work.outcome is None:
        work.check_survivors()
    if work.outcome is None:
        work.next_turn()
    return work.freeze()


def _skip(state: State, seat: int) -> tuple[State, tuple[Event, ...]]:
    work = _Work(state)
    work.say("skip", seat)
    work.set(seat, may_order=False)
    work.stayed(seat)
    work.skips += 1
    work.remember(seat, "skip", work.events)
    if work.skips >= sum(1 for p in work.players if p.in_play):
        work.end(None, "skips", "draw_skips")
    work.next_turn()
    return work.freeze()


IDLE = frozenset({"wall", "not_in_river", "not_in_pit"})
"""The answers that tell everyone a move changed nothing."""


def _check_allowed(state: State, seat: int, command: Command) -> None:
    """Section 7's bans (7.1, 7.7): refused with the reason, before anything is done."""
    options = state.options
    if command.when and not options.conditional_moves:
        raise RuleError("no_conditional_moves", "conditional moves are not allowed in this match (7.1)")
    if command.tell_wall and not options.semi_dark_moves:
        raise RuleError("no_semi_dark_moves", "semi-dark moves are not allowed in this match (7.1)")
    if command.dark and not command.tell_wall and not options.dark_moves:
        raise RuleError("no_dark_moves", "dark moves are not allowed in this match (7.1)")
    actions = [*command.before, *command.after, *(a for w in command.when for a in w.then)]
    shots = [a for a in actions if isinstance(a, Shoot)]
    if options.named_target and any(a.player is None for a in shots):
        raise RuleError("name_the_target", "a shot names its target in this match: shoot up at "
                        "player 2 on 3,4 (7.3)")
    if not options.named_target and any(a.player is not None for a in shots):
        raise RuleError("no_named_target", "shots name no target in this match (7.3)")
    if any(a.player is not None and not 1 <= a.player <= len(state.players) for a in shots):
        raise RuleError("no_such_player", "a shot names a player who is not in the match")
    if not options.throwing and any(isinstance(a, Throw) for a in actions):
        raise RuleError("no_throwing", "items are only left, not thrown, in this match (7.1)")
    if not options.mine_on_neighbour and any(isinstance(a, SetMine) and a.direction for a in actions):
        raise RuleError("no_mine_on_neighbour",
                        "a landmine is set only on the player's own cell in this match (7.1)")
    if not options.repeats:
        last = dict(state.last).get(seat)
        text = render_command(command)
        if (last is not None and last.move == text and last.answers
                and {e.key for e in last.answers} <= IDLE):
            trial = _Work(state)
            trial.move(seat, command)
            if _snapshot(trial) == _snapshot(_Work(state)):
                raise RuleError("repeat", "this move repeats your last one, which changed nothing "
                                "and would change nothing again (7.7)")


def _snapshot(work: _Work) -> Any:
    """What a move may change, bookkeeping aside."""
    players = tuple(msgspec.structs.replace(p, fallen=False, may_order=False, death_told=False)
                    for p in work.players)
    return work.plan, work.piles, work.mites, players, work.outcome


def miss_move(state: State, seat: int) -> tuple[State, tuple[Event, ...]]:
    """The player whose turn it is did not move in time (section 9): it has lost, its corpse
    and items left where it stood (outside the labyrinth, they are gone), or, under option
    `missed_move` "skip", the move is a skip."""
    _check_turn(state, seat)
    if state.options.missed_move == "skip" and state.players[seat].outside is None:
        return _skip(state, seat)
    work = _Work(state)
    work.say("timed_out", seat)
    if state.players[seat].outside is not None:
        work.set(seat, lost=True, outside=None, cell=None, carries=None, bullets=0, grenades=0)
    else:
        work.kill(seat)
        work.set(seat, death_told=True)
    work.check_survivors()
    work.next_turn()
    return work.freeze()


def vote_break(state: State, seat: int, yes: bool) -> tuple[State, tuple[Event, ...]]:
    """A break by majority (section 9): a player's yes opens the vote when none is open,
    then every player in the game votes once. A majority of yes grants it, a majority of
    no refuses it; a tie, the game master's casting vote, grants it (a break is bounded,
    and a computer has no wish to hurry anyone)."""
    if state.phase != "play":
        raise RuleError("not_playing", "breaks are taken during the game")
    if not 0 <= seat < len(state.players) or not state.players[seat].in_play:
        raise RuleError("no_such_player", "only a player in the game votes")
    said: list[Event] = []
    if state.votes is None:
        if not yes:
            raise RuleError("no_vote", "no break is put to the vote: vote yes to propose one")
        votes = {seat: True}
        said.append(Event("break_proposed", seat))
    else:
        if seat in dict(state.votes):
            raise RuleError("voted", "you have voted on this break")
        votes = {**dict(state.votes), seat: yes}
        said.append(Event("break_vote", seat, {"vote": "yes" if yes else "no"}))
    voters = sum(1 for p in state.players if p.in_play)
    ayes = sum(1 for v in votes.values() if v)
    noes = len(votes) - ayes
    if 2 * ayes > voters or (len(votes) == voters and ayes == noes):
        said.append(Event("break_agreed", args={"seconds": break_length(state.options)}))
        return msgspec.structs.replace(state, votes=None), tuple(said)
    if 2 * noes > voters or len(votes) == voters:
        said.append(Event("break_refused"))
        return msgspec.structs.replace(state, votes=None), tuple(said)
    return msgspec.structs.replace(state, votes=pairs(votes)), tuple(said)


def take_break(state: State, seat: int) -> tuple[State, tuple[Event, ...]]:
    """A break before the player's move (section 9): one each, and another only once half
    the players in the game, and two at least, have had one; then everyone may again."""
    _check_turn(state, seat)
    if seat in state.breaks:
        raise RuleError("no_break", "you have had a break: another once half the players have had one")
    breaks = (*state.breaks, seat)
    if len(breaks) >= 2 and 2 * len(breaks) >= sum(1 for p in state.players if p.in_play):
        breaks = ()
    return msgspec.structs.replace(state, breaks=breaks), (
        Event("break", seat, {"seconds": break_length(state.options)}),)


def break_length(options: Options) -> int | float:
    """The seconds a break lasts: `break_seconds` on the match's clock (times
    `clock_scale`), as a whole number when it is one."""
    seconds = round(options.break_seconds * options.clock_scale, 3)
    return int(seconds) if seconds == int(seconds) else seconds


def _check_turn(state: State, seat: int) -> None:
    if state.phase == "over":
        raise RuleError("game_over", "the game is over")
    if state.phase == "start":
        raise RuleError("choosing", "the start cells are being chosen")
    if not 0 <= seat < len(state.players):
        raise RuleError("no_such_player", f"there is no seat {seat}")
    if state.order[state.turn] != seat:
        raise RuleError("not_your_turn", f"it is player {state.order[state.turn] + 1}'s turn")


def status_event(state: State, seat: int) -> Event:
    """What a player has and how it is (6.4): told to everyone, as all talk is (6.2)."""
    p = state.players[seat]
    parts = [count_words(p.bullets, "bullet"), count_words(p.grenades, "grenade")]
    if isinstance(p.carries, TreasureItem):
        parts.append("a treasure")
    elif isinstance(p.carries, MineItem):
        parts.append("a landmine")
    elif isinstance(p.carries, CorpseItem):
        parts.append("a corpse")
    if not p.alive:
        parts = ["dead"]
    elif p.lost:
        parts = ["out of the game"]
    else:
        if p.wounded:
            parts.append("wounded")
        if p.infected:
            left = "" if p.heal_left is None else f" ({p.heal_left} moves to heal)"
            parts.append("infected" + left)
        if p.immune:
            parts.append("immune")
        if not (p.wounded or p.infected):
            parts.append("healthy")
        if p.outside is not None:
            parts.append("outside the labyrinth")
    text = ", ".join(parts)
    return Event("status", seat, {"status": text[0].upper() + text[1:], "bullets": p.bullets,
                                  "grenades": p.grenades})


K = TypeVar("K", int, Cell)
V = TypeVar("V")


def pairs(mapping: Mapping[K, V]) -> tuple[tuple[K, V], ...]:
    """A mapping as the state keeps it: (key, value) pairs in the order of the keys, so a
    state encodes as canonical JSON (its keys are cells and seats, not strings)."""
    return tuple(sorted(mapping.items()))


def _replace_player(players: tuple[Player, ...], seat: int, **changes: Any) -> tuple[Player, ...]:
    return tuple(msgspec.structs.replace(p, **changes) if p.seat == seat else p for p in players)


# --- the working copy ------------------------------------------------------------------------


@dataclass
class _Arrival:
    """What a movement ended in, for the conditions of 6.5."""

    wall: bool = False
    kinds: set[str] = field(default_factory=set)
    found: dict[str, int] = field(default_factory=dict)


class _Work:
    """A mutable copy of a State for one command, frozen again at the end."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.options = state.options
        self.plan = state.plan
        self.players: list[Player] = list(state.players)
        self.piles: dict[Cell, Pile] = dict(state.piles)
        self.mites: dict[Cell, tuple[int, int]] = dict(state.mites)
        self.phase = state.phase
        self.turn = state.turn
        self.round = state.round
        self.quiet = state.quiet
        self.changed = state.changed
        self.skips = state.skips
        self.survivor_left = state.survivor_left
        self.last: dict[int, Memory] = dict(state.last)
        self.outcome = state.outcome
        self.events: list[Event] = []

    def sources(self) -> frozenset[Cell]:
        """The cells nobody can reach: river sources, unless rivers are shallow (a player
        walks up them on foot)."""
        if self.options.rivers == "shallow":
            return frozenset()
        return frozenset(river_sources(self.plan))

    # --- bookkeeping

    def freeze(self) -> tuple[State, tuple[Event, ...]]:
        state = msgspec.structs.replace(
            self.state, plan=self.plan, players=tuple(self.players), piles=pairs(self.piles),
            mites=pairs(self.mites), phase=self.phase, turn=self.turn, round=self.round,
            quiet=self.quiet, changed=self.changed, skips=self.skips,
            survivor_left=self.survivor_left, last=pairs(self.last), outcome=self.outcome)
        return state, tuple(self.events)

    def say(self, key: str, seat: int | None = None, to: tuple[int, ...] | None = None,
            **args: Any) -> None:
        self.events.append(Event(key, seat, args, to))

    def set(self, seat: int, **changes: Any) -> Player:
        self.players[seat] = msgspec.structs.replace(self.players[seat], **changes)
        return self.players[seat]

    def pile(self, cell: Cell) -> Pile:
        return self.piles.get(cell, EMPTY)

    def put(self, cell: Cell, **changes: Any) -> None:
        pile = msgspec.structs.replace(self.pile(cell), **changes)
        if pile == EMPTY:
            self.piles.pop(cell, None)
        else:
            self.piles[cell] = pile

    def drop(self, cell: Cell, big: Big | None, bullets: int = 0, grenades: int = 0) -> None:
        """Items falling onto a cell (a landmine falls unactivated)."""
        pile = self.pile(cell)
        changes: dict[str, Any] = {"bullets": pile.bullets + bullets, "grenades": pile.grenades + grenades}
        if isinstance(big, TreasureItem):
            changes["treasures"] = (*pile.treasures, big.id)
        elif isinstance(big, CorpseItem):
            changes["corpses"] = (*pile.corpses, big.seat)
        elif isinstance(big, MineItem):
            changes["landmines"] = pile.landmines + 1
        self.put(cell, **changes)

    def others_on(self, cell: Cell, but: int | None = None) -> list[Player]:
        return [p for p in self.players
                if p.in_play and p.cell == cell and p.outside is None and p.seat != but]

    def end(self, winner: int | None, reason: str, key: str, seat: int | None = None, **args: Any) -> None:
        self.outcome = Outcome(winner, reason)  # type: ignore[arg-type]
        self.phase = "over"
        self.say(key, winner if seat is None else seat, **args)

    def remember(self, seat: int, move: str, events: Sequence[Event]) -> None:
        public = tuple(e for e in events if e.to is None and e.key not in ("turn", "move"))
        self.last[seat] = Memory(move, public)

    # --- turns

    def announce_turn(self) -> None:
        seat = self.state.order[self.turn]
        player = self.players[seat]
        self.say("turn", seat)
        if player.fallen:
            self.say("wounded_may_order" if player.may_order else "wounded_no_order", seat)
            self.set(seat, fallen=False)

    def next_turn(self) -> None:
        if self.outcome is not None:
            return
        order = self.state.order
        for _ in range(len(order)):
            self.turn += 1
            if self.turn == len(order):
                self.turn = 0
                self.end_of_round()
                if self.outcome is not None:
                    return
            player = self.players[order[self.turn]]
            if player.in_play:
                self.announce_turn()
                return
            if not player.alive and not player.death_told:
                self.say("dead", player.seat)
                self.set(player.seat, death_told=True)
        self.end(None, "no_survivor", "no_survivor")

    def end_of_round(self) -> None:
        self.round += 1
        if self.changed:
            self.quiet = 0
        else:
            self.quiet += 1
            nstop = self.options.nstop if self.options.nstop is not None else len(self.plan.cells)
            if self.quiet >= nstop:
                self.end(None, "nstop", "draw_nstop", rounds=self.quiet)
                return
            self.say("quiet", rounds=self.quiet)
        self.changed = False

    def check_survivors(self) -> None:
        alive = [p for p in self.players if p.in_play]
        if len(self.players) == 1:
            return
        if not alive:
            self.end(None, "no_survivor", "no_survivor")
        elif len(alive) == 1:
            seat = alive[0].seat
            if self.options.survivor_moves is None:
                self.end(seat, "kill", "won_kill")
            elif self.survivor_left is None:
                self.survivor_left = self.options.survivor_moves
                self.say("survivor", seat, moves=self.survivor_left)

    # --- a move

    def move(self, seat: int, command: Command) -> None:
        assert command.go is not None
        start = len(self.events)
        text = render_command(command)
        self.say("move", seat, move=text)
        player = self.players[seat]
        if player.outside is not None and command.before:
            raise RuleError("outside", "you are outside: the move back in comes first")
        self.set(seat, may_order=False)
        for action in command.before:
            self.act(seat, action)
        arrival = self.movement(seat, command.go) if self.outcome is None else _Arrival()
        if self.outcome is None:
            for action in command.after:
                self.act(seat, action)
            for when in command.when:
                if self.holds(when.if_, arrival):
                    for action in when.then:
                        self.act(seat, action)
        self.stayed(seat)
        if self.survivor_left is not None and self.outcome is None and self.players[seat].in_play:
            self.survivor_left -= 1
            if self.survivor_left <= 0:
                self.end(None, "survivor_failed", "survivor_failed", seat=seat)
        if command.dark:
            self.darken(seat, start, text, command.tell_wall, arrival.wall)
        self.remember(seat, text, self.events[start:])

    def darken(self, seat: int, start: int, text: str, tell_wall: bool, wall: bool) -> None:
        """A dark move (6.7): everything done by the rules, nothing told but "done" (and,
        semi-dark, whether a wall was hit, 6.8); the player is told what it picked up; the
        end of the game is told to everyone."""
        kept = ("won_treasure", "won_kill", "draw_treasure_lost", "no_survivor", "survivor",
                "survivor_failed", "lost_outside")
        moved: list[Event] = [Event("move", seat, {"move": text})]
        for event in self.events[start + 1:]:
            if event.key in kept:
                moved.append(event)
            elif event.key == "picked":
                moved.append(msgspec.structs.replace(event, to=(seat,)))
            elif event.to is None:
                moved.append(msgspec.structs.replace(event, to=()))
            else:
                moved.append(event)
        moved.insert(1, Event("dark_done", seat, {"move": text}))
        if tell_wall:
            moved.insert(2, Event("semi_wall" if wall else "semi_no_wall", seat))
        self.events[start:] = moved

    def holds(self, condition: str, arrival: _Arrival) -> bool:
        if condition == "wall":
            return arrival.wall
        if condition in ("treasure", "bullet", "grenade", "landmine", "corpse"):
            return arrival.found.get(condition, 0) > 0
        return condition in arrival.kinds

    def movement(self, seat: int, go: str) -> _Arrival:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        arrival = _Arrival()
        if player.outside is not None:
            exit_cell, way_out = player.outside
            if go == OPPOSITE[way_out]:
                self.set(seat, outside=None)
                self.say("returned", seat)
                self.enter(seat, exit_cell, arrival, None)
            else:
                self.set(seat, lost=True, outside=None, cell=None)
                self.say("lost_outside", seat)
            return arrival
        kind = self.plan.type_at(cell)
        if go == "flow":
            if not isinstance(kind, River):
                self.say("not_in_river", seat)
                return arrival
            target = self.carried(cell)
            arrival.kinds.add("river")
            self.land_on(seat, target, "flow_delta" if self.is_delta(target) else "flow_river", arrival, cell)
            return arrival
        if go == "loop":
            if not isinstance(kind, Pit):
                self.say("not_in_pit", seat)
                return arrival
            next_pit = self.plan.pit_next(cell)
            assert next_pit is not None
            arrival.kinds.add("pit")
            self.land_on(seat, next_pit, "loop", arrival, cell)
            return arrival
        direction: Direction = go  # type: ignore[assignment]
        side = self.plan.side(cell, direction)
        if side is Side.OPEN_EXIT:
            self.leave_labyrinth(seat, cell, direction)
            return arrival
        shallow = self.options.rivers == "shallow"
        if side.blocks:
            arrival.wall = True
            if isinstance(kind, River) and not shallow:
                target = self.carried(cell)
                arrival.kinds.add("river")
                self.land_on(seat, target, "wall_delta" if self.is_delta(target) else "wall_river",
                             arrival, cell)
            else:
                self.say("wall", seat)
            return arrival
        target = step(cell, direction)
        if shallow and isinstance(kind, River | Delta) and self.plan.river_next(target) == cell:
            if isinstance(kind, Delta):  # out of a delta against a river flowing in (7.4)
                arrival.wall = True
                self.say("river_against", seat)
                return arrival
            arrival.kinds.add("river")
            self.land_on(seat, target, "by_river", arrival, cell)  # upstream, on foot
            return arrival
        if shallow and isinstance(kind, River) and direction == kind.flow:
            arrival.kinds.add("river")
            self.land_on(seat, target, "by_river" if not self.is_delta(target) else None, arrival, cell)
            return arrival
        self.enter(seat, target, arrival, cell)
        return arrival

    def is_delta(self, cell: Cell) -> bool:
        return isinstance(self.plan.type_at(cell), Delta)

    def carried(self, cell: Cell) -> Cell:
        """Where the flow takes a player on a river cell: the next cell, or, with turbulent
        rivers (7.4), the delta."""
        at = cell
        for _ in range(len(self.plan.cells)):
            target = self.plan.river_next(at)
            if target is None or not isinstance(self.plan.types.get(target), River | Delta):
                return at
            at = target
            if self.options.rivers != "turbulent":
                return at
        return at

    def enter(self, seat: int, cell: Cell, arrival: _Arrival, came_from: Cell | None) -> None:
        """Walking into `cell` from `came_from` (None: from outside): a river carries on, a
        pit sends on (2.2)."""
        kind = self.plan.type_at(cell)
        if isinstance(kind, River):
            target = self.carried(cell)
            arrival.kinds.add("river")
            self.land_on(seat, target, "river_delta" if self.is_delta(target) else "river", arrival, came_from)
        elif isinstance(kind, Pit):
            next_pit = self.plan.pit_next(cell)
            assert next_pit is not None
            arrival.kinds.add("pit")
            self.land_on(seat, next_pit, "pit", arrival, came_from)
        else:
            self.land_on(seat, cell, None, arrival, came_from)

    def land_on(self, seat: int, cell: Cell, key: str | None, arrival: _Arrival, came_from: Cell | None) -> None:
        """The movement ends on `cell`; `key` says how (None: the cell's own words)."""
        player = self.players[seat]
        kind = self.plan.type_at(cell)
        arrival.kinds.add(type(kind).__name__.lower())
        if isinstance(kind, Encephalitis) and player.immune:
            arrival.kinds.add("land")
        moved = cell != came_from
        self.set(seat, cell=cell)
        if key is not None:
            self.say(key, seat)
        arrival.found = self.arrive(seat, cell, blast=moved, words=key is None)
        if moved:
            self.successful_move(seat)

    def successful_move(self, seat: int) -> None:
        """An infected player's count of successful moves (4.7)."""
        player = self.players[seat]
        if player.infected and player.alive and player.heal_left is not None:
            left = player.heal_left - 1
            self.set(seat, heal_left=left)
            if left <= 0:
                self.say("died_of_infection", seat)
                self.kill(seat)

    def leave_labyrinth(self, seat: int, cell: Cell, direction: Direction) -> None:
        player = self.players[seat]
        self.say("out", seat)
        carries = player.carries
        if isinstance(carries, TreasureItem):
            if self.state.truth[carries.id]:
                self.set(seat, outside=(cell, direction))
                self.end(seat, "treasure", "won_treasure")
                return
            self.set(seat, carries=None, outside=(cell, direction))
            self.changed = True
            self.say("crumbled", seat)
            return
        self.set(seat, outside=(cell, direction))
        self.say("must_return", seat)

    def arrive(self, seat: int, cell: Cell, *, blast: bool, words: bool = True) -> dict[str, int]:
        """A player ends a movement (or starts) on `cell`: a landmine's blast, the cell's
        effect, what is found and picked up. Returns what was found, by item."""
        if blast and self.pile(cell).armed:
            self.blast(cell, seat)
        player = self.players[seat]
        if not player.in_play:
            return {}
        kind = self.plan.type_at(cell)
        healed = immune = confiscated = False
        if isinstance(kind, Hospital):
            if player.wounded or player.infected:
                healed = True
                if player.infected:
                    immune = True
                    self.changed = True
                player = self.set(seat, wounded=False, infected=False, heal_left=None,
                                  immune=player.immune or immune)
            if isinstance(player.carries, CorpseItem):
                confiscated = True
                player = self.set(seat, carries=None)
        if isinstance(kind, Weaponry):  # the wounded and infected carry no bullets (5.1)
            healthy = not (player.wounded or player.infected)
            player = self.set(seat, bullets=MAX if healthy else 0, grenades=MAX)
            if healthy and player.carries is None and self.options.weaponry_landmines:
                player = self.set(seat, carries=MineItem())
        pile = self.pile(cell)
        found = {"treasure": len(pile.treasures), "bullet": pile.bullets, "grenade": pile.grenades,
                 "landmine": pile.landmines, "corpse": len(pile.corpses)}
        found = {k: v for k, v in found.items() if v}
        if words:
            self.cell_words(seat, cell, kind)
        if isinstance(kind, Encephalitis) and not player.immune and cell not in self.mites:
            self.mites[cell] = (self.round + 1, self.turn)
            self.say("mite_woken", seat)
        if healed:
            self.say("healed", seat)
        if immune:
            self.say("immune", seat)
        if confiscated:
            self.say("confiscated", seat)
        if found:
            self.say("found", seat, things=found)
        self.infection(seat, cell)
        if not self.players[seat].alive:
            return found
        picked = self.pick_up(seat, cell)
        if picked:
            self.say("picked", seat, to=(), things=picked)
        return found

    def cell_words(self, seat: int, cell: Cell, kind: Any) -> None:
        player = self.players[seat]
        if isinstance(kind, Land) or (isinstance(kind, Encephalitis) and player.immune):
            self.say("land", seat)
        elif isinstance(kind, Hospital):
            self.say("hospital", seat)
        elif isinstance(kind, Weaponry):
            self.say("weaponry", seat, bullets=player.bullets, grenades=player.grenades)
        elif isinstance(kind, Delta):
            self.say("delta", seat)
        elif isinstance(kind, Pit):
            self.say("pit", seat)
        elif isinstance(kind, River):
            self.say("river", seat)
        elif isinstance(kind, Encephalitis) and cell in self.mites:
            self.say("encephalitis", seat)

    def stayed(self, seat: int) -> None:
        """The end of a player's move: it is infected if it is still on a contagious cell
        (the mite's waker who did not leave in time, 4.7)."""
        player = self.players[seat]
        if self.outcome is None and player.in_play and player.outside is None and player.cell is not None:
            self.infection(seat, player.cell)

    def contagious(self, cell: Cell) -> bool:
        woke = self.mites.get(cell)
        if woke is not None and (self.round, self.turn) >= woke:
            return True
        pile = self.pile(cell)
        return any(self.players[s].infected for s in pile.corpses)

    def infection(self, seat: int, cell: Cell) -> None:
        """A healthy, not immune player on a contagious cell is infected (4.7)."""
        player = self.players[seat]
        if player.immune or player.infected or not player.in_play or not self.contagious(cell):
            return
        if isinstance(self.plan.type_at(cell), Hospital):
            return
        if player.wounded:
            self.say("died_of_infection", seat)
            self.kill(seat, infected=True)
            return
        moves = self.options.heal_moves
        self.drop(cell, player.carries, bullets=player.bullets)
        self.set(seat, infected=True, heal_left=moves, carries=None, bullets=0)
        if moves is None:
            self.say("infected_unlimited", seat)
        else:
            self.say("infected", seat, moves=moves)

    def pick_up(self, seat: int, cell: Cell) -> dict[str, int]:
        """Everything the player can carry, the less valuable exchanged for the more (5.1)."""
        player = self.players[seat]
        pile = self.pile(cell)
        picked: dict[str, int] = {}
        healthy = not (player.wounded or player.infected)
        grenades = min(MAX - player.grenades, pile.grenades)
        bullets = min(MAX - player.bullets, pile.bullets) if healthy else 0
        if grenades or bullets:
            player = self.set(seat, grenades=player.grenades + grenades, bullets=player.bullets + bullets)
            self.put(cell, grenades=pile.grenades - grenades, bullets=pile.bullets - bullets)
            picked.update({k: v for k, v in (("grenade", grenades), ("bullet", bullets)) if v})
        if healthy:
            best = self.best_lying(seat, cell)
            have = RANK[type(player.carries)] if player.carries is not None else 0
            if best is not None and RANK[type(best)] > have:
                self.take_from(cell, best)
                old = player.carries
                self.set(seat, carries=best)
                self.drop(cell, old)
                picked[_item_name(best)] = 1
        return picked

    def best_lying(self, seat: int, cell: Cell) -> Big | None:
        pile = self.pile(cell)
        if pile.treasures:
            return TreasureItem(pile.treasures[-1])
        if pile.landmines:
            return MineItem()
        carriable = [s for s in pile.corpses if not self.players[s].infected or self.players[seat].immune]
        if carriable:
            return CorpseItem(carriable[-1])
        return None

    def take_from(self, cell: Cell, item: Big) -> None:
        pile = self.pile(cell)
        if isinstance(item, TreasureItem):
            self.put(cell, treasures=tuple(t for t in pile.treasures if t != item.id))
        elif isinstance(item, MineItem):
            self.put(cell, landmines=pile.landmines - 1)
        else:
            corpses = list(pile.corpses)
            corpses.remove(item.seat)
            self.put(cell, corpses=tuple(corpses))

    # --- wounds and deaths

    def wound(self, seat: int, by_mine: bool = False) -> None:
        """A hit (5.5): a wounded or infected player dies; otherwise it drops all but its
        grenades, falls, and may order a new cell on its next turn."""
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        if player.wounded or player.infected:
            self.kill(seat)
            return
        may = player.orders > 0 and (self.options.mine_reorder or not by_mine)
        self.drop(cell, player.carries, bullets=player.bullets)
        self.set(seat, wounded=True, fallen=True, carries=None, bullets=0, may_order=may)

    def kill(self, seat: int, infected: bool = False) -> None:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        self.drop(cell, player.carries, bullets=player.bullets, grenades=player.grenades)
        self.drop(cell, CorpseItem(seat))
        self.set(seat, alive=False, carries=None, bullets=0, grenades=0, fallen=False, may_order=False,
                 infected=player.infected or infected)
        self.changed = True

    def blast(self, cell: Cell, arriving: int | None) -> None:
        """A landmine blows up on `cell` (5.7): every player there is wounded; the bullets and
        landmines there, lying or carried, are destroyed."""
        self.say("mine_blast", arriving)
        self.put(cell, armed=0, landmines=0, bullets=0)
        victims = self.others_on(cell)
        for p in victims:
            self.set(p.seat, bullets=0, carries=None if isinstance(p.carries, MineItem) else p.carries)
        for p in victims:
            self.wound(p.seat, by_mine=True)
        if any(p.seat != arriving for p in victims):
            self.say("scream", arriving)

    # --- actions

    def act(self, seat: int, action: Action) -> None:
        if self.outcome is not None:
            return
        player = self.players[seat]
        if not player.in_play:
            return
        if player.outside is not None:
            return
        if isinstance(action, Shoot):
            named = None
            if action.player is not None and action.cell is not None:
                named = (action.player - 1, (int(action.cell[0]), int(action.cell[1])))
            self.shoot(seat, action.direction, named)
        elif isinstance(action, Blow):
            self.blow(seat, action.direction)
        elif isinstance(action, Leave):
            self.leave(seat, action)
        elif isinstance(action, Throw):
            self.throw(seat, action)
        elif isinstance(action, SetMine):
            self.set_mine(seat, action)
        else:
            self.take(seat, action)

    def shoot(self, seat: int, direction: Direction, target: tuple[int, Cell] | None = None) -> None:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        kind = self.plan.type_at(cell)
        why = ("you are wounded" if player.wounded else "you are infected" if player.infected
               else "no shooting out of a hospital" if isinstance(kind, Hospital)
               else "no shooting out of a weaponry" if isinstance(kind, Weaponry)
               else "the powder is damp" if self.options.damp_powder and isinstance(kind, River)
               else "")
        if why:
            self.say("cannot_shoot", seat, direction=direction, why=why)
            return
        if player.bullets == 0:
            self.say("no_bullets", seat, direction=direction)
            return
        self.set(seat, bullets=player.bullets - 1)
        hit = [p for p in self.others_on(cell, but=seat) if not p.fallen and self.aimed(p, cell, target)]
        if not hit:
            hit = self.flight(cell, direction, target)
        dropped_here = [p for p in hit if p.cell == cell]
        for p in hit:
            self.wound(p.seat)
        if dropped_here:
            self.pick_up(seat, cell)  # caught on the fly
        else:
            self.refill_bullets(seat, cell)
        player = self.players[seat]
        self.say("shot", seat, direction=direction, bullets=player.bullets, ground=self.pile(cell).bullets)
        self.say("scream" if hit else "no_scream", seat)

    def refill_bullets(self, seat: int, cell: Cell) -> None:
        player = self.players[seat]
        pile = self.pile(cell)
        n = min(MAX - player.bullets, pile.bullets)
        if n:
            self.set(seat, bullets=player.bullets + n)
            self.put(cell, bullets=pile.bullets - n)

    @staticmethod
    def aimed(player: Player, cell: Cell, target: tuple[int, Cell] | None) -> bool:
        """Whether a bullet can hit `player` on `cell`: any player, or under 7.3's named
        target only the one named, on the cell named."""
        return target is None or target == (player.seat, cell)

    def flight(self, cell: Cell, direction: Direction, target: tuple[int, Cell] | None = None) -> list[Player]:
        """The players a bullet from `cell` hits: it flies until a wall, a hospital or a
        weaponry (unless 7.3 lets it through) or a player (a fallen one it passes over;
        with a named target, every other player too)."""
        flown = 0
        at = cell
        limit = self.options.shooting_range
        while limit is None or flown < limit:
            side = self.plan.side(at, direction)
            if side.blocks or side.outer:
                return []
            at = step(at, direction)
            flown += 1
            kind = self.plan.type_at(at)
            if isinstance(kind, Hospital | Weaponry) and not self.options.shoot_through:
                return []
            if isinstance(kind, Hospital):
                continue  # nobody is wounded in a hospital (4.2)
            standing = [p for p in self.others_on(at) if not p.fallen and self.aimed(p, at, target)]
            if standing:
                return standing
        return []

    def blow(self, seat: int, direction: Direction) -> None:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        if player.grenades == 0:
            self.say("no_grenades", seat, direction=direction)
            return
        self.set(seat, grenades=player.grenades - 1)
        side = self.plan.side(cell, direction)
        report = self.options.blow_report
        if side.destructible:
            self.plan = self.plan.blow(cell, direction)
            self.changed = True
        pile = self.pile(cell)
        n = min(MAX - self.players[seat].grenades, pile.grenades)
        if n:
            self.set(seat, grenades=self.players[seat].grenades + n)
            self.put(cell, grenades=pile.grenades - n)
        self.say("blow", seat, direction=direction, grenades=self.players[seat].grenades)
        if side in (Side.PASSAGE, Side.OPEN_EXIT):
            if report in ("missing", "all"):
                self.say("no_wall_there", seat)
        elif report == "all":
            self.say("wall_blown" if side.destructible else "wall_stayed", seat)

    def give_up(self, seat: int, item: str, count: int) -> tuple[Big | None, int, int] | None:
        """Takes `count` of an item from the player: (big item, bullets, grenades), or None
        when it has not got them."""
        player = self.players[seat]
        if item == "bullet":
            if player.bullets < count:
                return None
            self.set(seat, bullets=player.bullets - count)
            return None, count, 0
        if item == "grenade":
            if player.grenades < count:
                return None
            self.set(seat, grenades=player.grenades - count)
            return None, 0, count
        carries = player.carries
        if carries is None or _item_name(carries) != item:
            return None
        self.set(seat, carries=None)
        return carries, 0, 0

    def leave(self, seat: int, action: Leave) -> None:
        cell = self.players[seat].cell
        assert cell is not None
        words = _render(action)
        given = self.give_up(seat, action.item, action.count)
        if given is None:
            self.say("not_carried", seat, action=words)
            return
        big, bullets, grenades = given
        self.drop(cell, big, bullets, grenades)
        self.say("leave", seat, action=words, things={action.item: action.count})

    def throw(self, seat: int, action: Throw) -> None:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        words = _render(action)
        if player.wounded or player.infected:
            self.say("cannot_carry", seat, action=words,
                     why="you are wounded" if player.wounded else "you are infected")
            return
        given = self.give_up(seat, action.item, action.count)
        if given is None:
            self.say("not_carried", seat, action=words)
            return
        big, bullets, grenades = given
        side = self.plan.side(cell, action.direction)
        things_ = {action.item: action.count}
        if side is Side.OPEN_EXIT:
            self.say("thrown_out", seat, action=words, things=things_, direction=action.direction)
            if isinstance(big, TreasureItem) and self.state.truth[big.id]:
                self.end(None, "treasure_lost", "draw_treasure_lost")
            return
        if side.blocks:
            self.drop(cell, big, bullets, grenades)
            self.say("at_feet", seat, action=words, things=things_, direction=action.direction)
            return
        target = step(cell, action.direction)
        kind = self.plan.type_at(target)
        self.say("throw", seat, action=words, things=things_, direction=action.direction)
        if isinstance(big, CorpseItem) and isinstance(kind, Hospital):
            return  # cremated (4.2)
        self.drop(target, big, bullets, grenades)
        if isinstance(big, TreasureItem) and self.state.truth[big.id] and target in self.sources():
            self.end(None, "treasure_lost", "draw_treasure_lost")
            return
        if isinstance(big, CorpseItem) and self.pile(target).armed:
            self.blast(target, None)

    def set_mine(self, seat: int, action: SetMine) -> None:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        words = _render(action)
        if player.wounded or player.infected:
            self.say("cannot_carry", seat, action=words,
                     why="you are wounded" if player.wounded else "you are infected")
            return
        if not isinstance(player.carries, MineItem):
            self.say("not_carried", seat, action=words)
            return
        self.set(seat, carries=None)
        target = cell
        if action.direction is not None:
            side = self.plan.side(cell, action.direction)
            if side is Side.OPEN_EXIT:
                self.say("defused", seat)  # by the external security (5.7)
                return
            if not side.blocks:
                target = step(cell, action.direction)
        if isinstance(self.plan.type_at(target), Hospital | Weaponry):
            self.say("set_mine", seat)  # defused there, unsaid
            return
        self.put(target, armed=self.pile(target).armed + 1)
        self.say("set_mine", seat)

    def take(self, seat: int, action: Take) -> None:
        player = self.players[seat]
        cell = player.cell
        assert cell is not None
        words = _render(action)
        if action.which == "old":
            self.say("keep", seat)
            return
        if player.wounded or player.infected:
            self.say("cannot_carry", seat, action=words,
                     why="you are wounded" if player.wounded else "you are infected")
            return
        lying = self.pile(cell).treasures
        index = len(lying) - 1 if action.which in ("new", "topmost") else int(action.which) - 1
        if not 0 <= index < len(lying):
            self.say("no_such_treasure", seat, action=words)
            return
        chosen = lying[index]
        self.put(cell, treasures=tuple(t for t in lying if t != chosen))
        old = player.carries
        self.set(seat, carries=TreasureItem(chosen))
        self.drop(cell, old)
        which = action.which if isinstance(action.which, str) else treasure_place(action.which)
        self.say("take", seat, which=which)


def _item_name(item: Big) -> str:
    return "treasure" if isinstance(item, TreasureItem) else "corpse" if isinstance(item, CorpseItem) else "landmine"


def _render(action: Action) -> str:
    return render_action(action)


def events_for(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events a seat is told (None: what everyone is told)."""
    return [e for e in events if e.to is None or (seat is not None and seat in e.to)]


__all__ = [
    "OPTIONS", "PHRASES", "Event", "Options", "Outcome", "Player", "RuleError", "State",
    "ask_cell", "choose_start", "configure", "events_for", "miss_move", "order_cell", "play", "say",
    "start_game", "status_event", "take_break", "vote_break",
]

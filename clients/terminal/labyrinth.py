"""Labyrinth in the terminal: the view as text, typed lines as commands.

A move is typed as a person says it ("go left, shoot up") and sent as text: the server
reads it with the same parser (domain/games/labyrinth/moves.py) this terminal checks it
with first, so a line that is not a move is refused here with a caret under the column
where it stops being one. `start`, `order`, `ask`, `break` and `vote` lines become the
game's other commands. The view shows whose turn it is and the clock, the players as
everyone knows them, the viewer's own belongings and health, and, on the viewer's turn,
its map: the shape of the labyrinth as a grid with the notes a player would keep at the
table, taken from the answers it heard (`Notes`: the types of the cells it walked into,
started on or asked about, the walls it hit, and where it is while the answers say so);
after the match, the plan with where everyone ended.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clients.labyrinth_replay import picture
from clients.terminal.common import game_state_to_play, seat_names, waiting_for_seats
from domain.games.labyrinth.moves import MoveError, parse_any, parse_command
from domain.games.labyrinth.pictures import ascii_picture
from domain.games.labyrinth.plan import DIRECTIONS, Cell, cell_name, step
from domain.games.labyrinth.plan_text import parse_plan

HELP = """\
players are numbered from 1, as the game master says them (player 1 is seat 0).
moves, as the rule book says them (one movement a move; actions before and after it):
  go left | go up, shoot right | blow the up wall, then go up | go by the flow | go by the loop
  shoot left (under option 7.3: shoot up at player 2 on 3,4) | throw a grenade down
  leave a grenade | leave 2 bullets | throw the corpse right | set the mine | set the mine left
  take the new treasure | take the second lowest treasure | keep the old treasure
  go right; if I find a treasure, shoot up; if I fall into a pit, leave a grenade
    (conditions: find a treasure/bullet/grenade/landmine/corpse, fall into a pit, walk
     into a river/delta/hospital/weaponry, walk onto land, hit a wall)
  go right, don't tell the result          (a dark move: only you hear what you picked up)
  go right, don't tell where I end up but tell me if I hit a wall     (semi-dark)
  skip | recall 3 (player 3's last move) | status? or ask status (your belongings, said to all)
  a move as JSON too: {"go": "right", "after": [{"type": "shoot", "direction": "up"}]}
other commands:
  start 3,4           your secret start cell (6.1), when the game master asks for it
  order 3,4           a new cell after a wound (5.5) or with a handicap (7.2); order none declines
  ask 3,4             a handicap's question before the start (7.2): the type of a cell
  break               a break before your move (section 9);  vote yes | vote no  on a break
  view (or Enter, or status) shows the match again, with your belongings; history, help, quit
cells are ROW,COLUMN from the top left (3,4: row 3, column 4). On your turn the view draws your
map: the types of the cells you were told, the walls you hit, and where you are while the
answers say so (a river, a pit or a dark move leave you somewhere they do not tell)."""

STANDING = {"playing": "playing", "dead": "dead", "lost": "lost (out of the game)", "won": "WON"}

TOP = frozenset({
    "turn_order", "choose_start", "start_chosen", "start_cell", "start_rejected", "start_drawn", "start_on",
    "turn", "wounded_may_order", "wounded_no_order", "dead", "ordered_cell", "new_cell", "cell_rejected",
    "asked_cell", "cell_type", "move", "skip", "timed_out", "break", "break_proposed", "break_vote",
    "break_agreed", "break_refused", "status", "recall", "recall_none", "quiet", "draw_nstop",
    "draw_skips", "draw_treasure_lost", "won_kill", "survivor", "survivor_failed", "no_survivor",
})
"""Phrase keys said on their own line; the others answer the move above them and are indented."""

TYPE_MARKS: Mapping[str, str] = {
    "land": ".", "a hospital": "H", "a weaponry": "W", "a pit": "p", "a river": "~",
    "a delta": "D", "an encephalitis cell": "E",
}
"""How the grid marks a cell whose type the game master named to the viewer."""

_CELL = re.compile(r"\(?\s*(\d+)\s*(?:,|\s)\s*(\d+)\s*\)?")
_NUMBER = {0: "no", 1: "one", 2: "two", 3: "three"}


def _count(n: int, item: str) -> str:
    return f"{_NUMBER.get(n, str(n))} {item if n == 1 else item + 's'}"


def parse_cell(text: str, gs: Mapping[str, Any] | None = None) -> Cell:
    """`3,4` (or `3 4`, `(3, 4)`) as a cell; ValueError if it is not one, or not a cell of
    the labyrinth's shape when `gs` (the game state) gives it."""
    found = _CELL.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text.strip() or 'nothing'!r} is not a cell: write ROW,COLUMN, e.g. 3,4")
    cell = (int(found.group(1)), int(found.group(2)))
    if gs is not None and gs.get("shape") and [cell[0], cell[1]] not in gs["shape"]:
        raise ValueError(f"{cell_name(cell)} is not a cell of the labyrinth (your map shows its "
                         f"{gs.get('rows')} rows and {gs.get('columns')} columns)")
    return cell


def move_error(text: str, exc: MoveError) -> str:
    """A refused move, with the text and a caret under the column where it stops being one."""
    if exc.column is None:
        return f"not a move: {exc} (help lists the moves)"
    return f"not a move (help lists them):\n  {text}\n  {' ' * (exc.column - 1)}^ {exc}"


def player_name(view: Mapping[str, Any], seat: int, *, mark_you: bool = False) -> str:
    """`player 2 (bob)`: the game master's number, and the seat's name when it has one
    (`player 1 (alice, you)` with `mark_you` for the viewer's own seat)."""
    name = seat_names(dict(view)).get(seat)
    notes = [name] if name and name != f"seat {seat}" else []
    if mark_you and seat == view.get("you"):
        notes.append("you")
    return f"player {seat + 1}" + (f" ({', '.join(notes)})" if notes else "")


def belongings(me: Mapping[str, Any]) -> str:
    """What a player has and how it is, in words: `two bullets, three grenades, a landmine; healthy`."""
    things = [_count(me["bullets"], "bullet"), _count(me["grenades"], "grenade")]
    if me.get("carries"):
        things.append(f"a {me['carries']}")
    health: list[str] = []
    if not me.get("alive", True):
        return ", ".join(things) + "; dead"
    if me.get("wounded"):
        health.append("wounded")
    if me.get("infected"):
        left = me.get("heal_left")
        health.append("infected" + (f" ({_count(left, 'successful move')} left to reach a hospital)"
                                    if left is not None else ""))
    if me.get("immune"):
        health.append("immune to encephalitis")
    if me.get("lost"):
        health.append("lost")
    if not health:
        health.append("healthy")
    if me.get("outside"):
        health.append("outside the labyrinth: come back in through the exit you left by")
    return ", ".join(things) + "; " + ", ".join(health)

ARRIVED: Mapping[str, str] = {
    "land": ".", "hospital": "H", "weaponry": "W", "delta": "D", "mite_woken": "E", "encephalitis": "E",
}
"""Answers that put the mover on the next cell its way, and that cell's type on the map."""
CARRIED: Mapping[str, str] = {"river": "~", "river_delta": "~", "pit": "p"}
"""Answers that say what the next cell its way is, and carried the mover on from it."""
STAYED = frozenset({"wall", "not_in_river", "not_in_pit", "river_against"})
"""Answers that leave the mover where it was."""
MOVED = frozenset({"flow_river", "flow_delta", "loop", "wall_river", "wall_delta", "by_river", "out",
                   "returned", "dark_done", "lost_outside"} | set(ARRIVED) | set(CARRIED) | STAYED)
"""Every answer about a movement (the first one in a move's answers is the movement's)."""
LOST_BY: Mapping[str, str] = {
    "river": "a river carried you", "river_delta": "a river carried you", "flow_river": "a river carried you",
    "flow_delta": "a river carried you", "wall_river": "a river carried you", "wall_delta": "a river carried you",
    "pit": "you fell through a pit", "loop": "you went by the loop", "lost_outside": "you left the labyrinth",
}
"""Why the answers no longer say where the mover is."""


@dataclass
class Notes:
    """What a player's own answers tell it of the plan, kept by the terminal as a person
    keeps notes at the table: the types of cells it walked into, asked about or started
    on, the walls it hit, and where it is while the answers say so (a river, a pit or a
    dark move leave it somewhere it cannot tell)."""

    types: dict[Cell, str] = field(default_factory=dict)
    walls: set[tuple[Cell, str]] = field(default_factory=set)
    here: Cell | None = None
    outside: tuple[Cell, str] | None = None
    lost_since: str | None = None
    """Why the answers no longer say where the player is (None: they do, or it has no cell yet)."""

    def heard(self, you: int, said: Sequence[Mapping[str, Any]]) -> None:
        """Take in the game master's words of one event, as the viewer `you` heard them."""
        for n, s in enumerate(said):
            key, args, seat = s.get("key"), s.get("args") or {}, s.get("seat")
            if key == "cell_type" and isinstance(args.get("cell"), str):
                self.types[parse_cell(args["cell"])] = TYPE_MARKS.get(str(args.get("where")), "?")
            if seat != you:
                continue
            if key in ("start_cell", "new_cell") and isinstance(args.get("cell"), str):
                self.here, self.outside, self.lost_since = parse_cell(args["cell"]), None, None
            elif key == "start_rejected":
                self.here = None
            elif key == "start_on" and self.here is not None:
                self.types[self.here] = TYPE_MARKS.get(str(args.get("where")), "?")
            elif key == "move":
                self._moved(str(args.get("move", "")), [t for t in said[n + 1:] if t.get("seat") == you])

    def _moved(self, text: str, answers: Sequence[Mapping[str, Any]]) -> None:
        try:
            command = parse_command(text)
        except MoveError:
            return
        keys = [str(a.get("key")) for a in answers]
        first = next((k for k in keys if k in MOVED), None)
        if command.go is None or first is None:
            return
        if first == "dark_done":
            # A semi-dark move's wall: it stayed, unless a river carried it on after the wall.
            known = self.types.get(self.here) if self.here is not None else None
            if "semi_wall" not in keys or known in (None, "~"):
                self._lose("your dark move")
            return
        if first == "returned" and self.outside is not None:
            back = self.outside[0]
            nxt = next((k for k in keys[keys.index("returned") + 1:] if k in ARRIVED or k in CARRIED), None)
            self.outside, self.here, self.lost_since = None, back, None
            if nxt is not None and nxt in ARRIVED:
                self.types[back] = ARRIVED[nxt]
            elif nxt is not None:
                self._lose(LOST_BY.get(nxt, "a river or a pit"))
            return
        go = command.go
        if self.here is None or go not in DIRECTIONS:
            if first not in STAYED and first not in ARRIVED:
                self._lose(LOST_BY.get(first, "a river or a pit"))
            return
        target = step(self.here, go)
        if first in ARRIVED or first == "by_river":
            self.types[target] = ARRIVED.get(first, "~")
            self.here = target
        elif first in CARRIED:
            self.types[target] = CARRIED[first]
            self._lose(LOST_BY[first])
        elif first == "wall":
            self.walls.add((self.here, go))
        elif first == "river_against":
            self.types[target] = "~"
        elif first == "out":
            self.outside, self.here = (self.here, go), None
        elif first not in STAYED:
            self._lose(LOST_BY.get(first, "a river or a pit"))

    def _lose(self, why: str) -> None:
        self.here, self.lost_since = None, why

    def where(self) -> str:
        if self.outside is not None:
            return f"you are outside: you left by the {self.outside[1]} side of {cell_name(self.outside[0])}"
        if self.here is not None:
            return f"you are at {cell_name(self.here)}, @"
        if self.lost_since:
            return f"where you are is not known since {self.lost_since}"
        return "you have no cell yet"


class Terminal:
    """The Labyrinth terminal. It keeps each seat's notes (`Notes`) from the events it is
    shown, so one terminal may show several matches and seats (a replay, the tests)."""

    def __init__(self) -> None:
        self._notes: dict[tuple[Any, ...], Notes] = {}

    def notes(self, view: Mapping[str, Any]) -> Notes:
        """The notes of the viewer of `view` in its match (empty for a spectator)."""
        key = (view.get("match"), view.get("commitment"), view.get("you"))
        return self._notes.setdefault(key, Notes())

    def help(self, view: dict[str, Any] | None) -> str:
        return HELP

    # --- typed lines -------------------------------------------------------------------

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        text = line.strip()
        words = text.split(None, 1)
        verb = words[0].lower() if words else ""
        rest = words[1] if len(words) > 1 else ""
        gs = game_state_to_play(view)
        if verb == "start":
            if gs.get("phase") != "start":
                raise ValueError("the start cells are chosen already")
            return {"type": "start", "cell": list(parse_cell(rest, gs))}
        if verb == "order":
            if rest.strip().lower() in ("none", "no", "nothing"):
                return {"type": "order", "cell": None}
            return {"type": "order", "cell": list(parse_cell(rest, gs))}
        if verb == "ask":
            if rest.strip().lower().rstrip("?") in ("status", "the status", "for the status"):
                return {"type": "move", "move": "status"}
            return {"type": "ask", "cell": list(parse_cell(rest, gs))}
        if verb == "break":
            if rest:
                raise ValueError("a break is just `break` (before your own move)")
            return {"type": "break"}
        if verb == "vote":
            answer = rest.strip().lower()
            if answer not in ("yes", "no"):
                raise ValueError("vote yes or vote no (on a break, section 9)")
            return {"type": "vote", "yes": answer == "yes"}
        if verb in ("me", "map", "grid", "players", "notes"):
            raise ValueError("press Enter (or type view) to see the match again: your belongings and "
                             "the players, and on your turn your map")
        if text.startswith("{"):
            return {"type": "move", "move": self._json_move(text)}
        try:
            parse_command(text)
        except MoveError as exc:
            raise ValueError(move_error(text, exc)) from None
        if gs.get("phase") == "start" and verb not in ("status", "recall"):
            raise ValueError("the players are choosing their start cells: type start ROW,COLUMN when "
                             "the game master asks you")
        return {"type": "move", "move": text}

    @staticmethod
    def _json_move(text: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ValueError("a move as JSON is an object, e.g. {\"go\": \"right\"}")
        try:
            parse_any(value)
        except MoveError as exc:
            raise ValueError(f"not a move: {exc}") from None
        return value

    # --- the view ----------------------------------------------------------------------

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        gs = view.get("game_state") or {}
        head = f"== labyrinth · match {view.get('match')}"
        waiting = waiting_for_seats(view, head)
        if waiting is not None:
            return waiting
        you = view.get("you")
        lines = [self._headline(view, gs, seconds_left)]
        if you is not None:
            lines.append(f"you are {player_name(view, you)}; the order of play: "
                         + ", ".join(str(s + 1) for s in gs.get("order", ())))
        else:
            lines.append("the order of play: " + ", ".join(str(s + 1) for s in gs.get("order", ())))
        full = gs.get("full")
        for p in gs.get("players", ()):
            lines.append("  " + self._player_line(view, p, self._standing_at_end(view, full, p["seat"])))
        me = gs.get("me")
        if me is not None and full is None:
            lines.append(f"you: {belongings(me)}")
            lines.extend(self._your_options(gs, me))
        lines.extend(self._table(gs))
        if full is not None:
            lines.extend(self._ending(view, gs, full))
        elif gs.get("phase") == "start" or gs.get("to_act") == you or you is None:
            lines.extend(self.grid(view, gs))
        return "\n".join(lines)

    def _headline(self, view: Mapping[str, Any], gs: Mapping[str, Any], seconds_left: float | None) -> str:
        parts = [f"== labyrinth · match {view.get('match')}", f"round {gs.get('round')}"]
        to_act = gs.get("to_act")
        phase = gs.get("phase")
        if view.get("ended") or phase == "over":
            parts.append("the match is over")
        elif to_act is not None:
            doing = "choose a start cell" if phase == "start" else "move"
            if to_act == view.get("you"):
                parts.append(f"YOUR TURN: {doing}")
            else:
                parts.append(f"{player_name(view, to_act)} to {doing}")
        if seconds_left is not None and not view.get("ended"):
            parts.append(f"{seconds_left:.0f} s left")
        return " · ".join(parts)

    @staticmethod
    def _standing_at_end(view: Mapping[str, Any], full: Mapping[str, Any] | None, seat: int) -> str | None:
        """How a player stands as the full view shows it (None without it): what everyone
        was told may lag (a death is said at the dead player's next turn)."""
        if full is None or seat >= len(full.get("players", ())):
            return None
        p = full["players"][seat]
        if (view.get("result") or {}).get("winner") == seat:
            return "won"
        if not p.get("alive", True):
            return "dead"
        return "lost" if p.get("lost") else "playing"

    def _player_line(self, view: Mapping[str, Any], p: Mapping[str, Any], standing: str | None = None) -> str:
        seat = p["seat"]
        who = player_name(view, seat, mark_you=True)
        standing = standing or str(p.get("standing", ""))
        bits = [STANDING.get(standing, standing)]
        if p.get("started_on"):
            bits.append(f"started on {p['started_on']}")
        bits.append(_count(p.get("moves", 0), "move"))
        last = p.get("last_move")
        if last:
            answers = "; ".join(last.get("answers") or ()) or "no answer"
            bits.append(f"last: {last['move']} -> {answers}")
        return f"{who}: " + " · ".join(bits)

    def _your_options(self, gs: Mapping[str, Any], me: Mapping[str, Any]) -> list[str]:
        lines = []
        if gs.get("phase") == "start":
            if me.get("asks"):
                lines.append(f"  you may ask the type of {_count(me['asks'], 'cell')} first: ask ROW,COLUMN (7.2)")
            if me.get("chosen") is not None:
                lines.append(f"  your start choice: {cell_name(tuple(me['chosen']))}")
            if me.get("refused"):
                lines.append("  refused before (choose another): "
                             + ", ".join(cell_name(tuple(c)) for c in me["refused"]))
        if me.get("may_order"):
            left = me.get("orders", 0) + me.get("extra_orders", 0)
            lines.append(f"  you may order a new cell before your move: order ROW,COLUMN "
                         f"({_count(left, 'order')} left), or order none")
        elif me.get("extra_orders"):
            lines.append(f"  a handicap gives you {_count(me['extra_orders'], 'cell order')} "
                         "(order ROW,COLUMN before your move)")
        return lines

    def _table(self, gs: Mapping[str, Any]) -> list[str]:
        lines: list[str] = []
        if gs.get("phase") == "over":
            return lines
        if gs.get("phase") == "play":
            lines.append(f"rounds with no changes: {gs.get('quiet', 0)} ({gs.get('nstop')} in a row: a draw) · "
                         f"encephalitis: {gs.get('heal_moves')} successful moves to reach a hospital")
        if gs.get("breaks"):
            lines.append("breaks taken by player " + ", ".join(str(s + 1) for s in gs["breaks"]))
        votes = gs.get("votes")
        if votes is not None:
            said = ", ".join(f"player {int(s) + 1} {'yes' if v else 'no'}" for s, v in sorted(votes.items()))
            lines.append(f"a break is put to the vote ({said or 'no votes yet'}): vote yes or vote no")
        return lines

    def grid(self, view: Mapping[str, Any], gs: Mapping[str, Any]) -> list[str]:
        """The shape of the labyrinth (its cells), with the viewer's notes: the types of
        the cells it was told, the walls it hit, `@` where it is while the answers say so."""
        shape = {(c[0], c[1]) for c in gs.get("shape", ())}
        if not shape:
            return []
        rows, columns = int(gs.get("rows") or 0), int(gs.get("columns") or 0)
        notes = self.notes(view) if view.get("you") is not None else Notes()
        label = len(str(rows)) + 2
        out = [" " * (label + 1) + "".join(f"{c:^4}" for c in range(1, columns + 1)).rstrip()]

        def across(r: int) -> str:  # the sides between row r and row r + 1
            chars = []
            for c in range(1, columns + 1):
                near = (r, c) in shape or (r + 1, c) in shape
                wall = ((r, c), "down") in notes.walls or ((r + 1, c), "up") in notes.walls
                chars.append(("+" if near or (r, c - 1) in shape or (r + 1, c - 1) in shape else " ")
                             + ("---" if wall else "   "))
            end = "+" if any(x in shape for x in ((r, columns), (r + 1, columns))) else ""
            return (" " * label + "".join(chars) + end).rstrip()

        out.append(across(0))
        for r in range(1, rows + 1):
            chars = []
            for c in range(1, columns + 2):
                wall = ((r, c - 1), "right") in notes.walls or ((r, c), "left") in notes.walls
                chars.append("|" if wall else " ")
                if c <= columns:
                    code = notes.types.get((r, c), "·") if (r, c) in shape else " "
                    chars.append(f" {code}{'@' if notes.here == (r, c) else ' '}")
            out.append((f"{r:>{label - 1}} " + "".join(chars)).rstrip())
            out.append(across(r))
        if view.get("you") is None:
            return ["the labyrinth's cells:", *out]
        return ["your map, from what the game master told you (" + notes.where() + "):", *out,
                "  · not known yet  . land  H hospital  W weaponry  E encephalitis  D delta  ~ river  "
                "p pit  | --- a wall you hit  @ you"]

    def _ending(self, view: Mapping[str, Any], gs: Mapping[str, Any], full: Mapping[str, Any]) -> list[str]:
        lines = []
        result = view.get("result") or {}
        if view.get("ended"):
            winner = result.get("winner")
            who = "a draw" if winner is None else f"{player_name(view, winner)} wins"
            lines.append(f"MATCH OVER: {who} ({result.get('reason')})")
        else:
            lines.append("the full view (the host of the plan, or an auditor): where everyone is and what lies where")
        ends: dict[Cell, list[str]] = {}
        for p in full.get("players", ()):
            cell = p.get("cell")
            where = "outside" if cell is None else cell_name((cell[0], cell[1]))
            if p.get("outside"):
                where = f"outside, left by the {p['outside']['side']} side of {cell_name(tuple(p['outside']['cell']))}"
            elif cell is not None:
                ends.setdefault((cell[0], cell[1]), []).append(str(p["seat"] + 1))
            lines.append(f"  {player_name(view, p['seat'])}: {where} · {belongings({**p, 'outside': None})}")
        for pile in full.get("piles", ()):
            lines.append(f"  lying at {cell_name((pile['cell'][0], pile['cell'][1]))}: {pile_words(pile, full)}")
        plan_text = full.get("plan_text")
        if plan_text:
            lines.append("the plan (its walls as they are now, its treasures and items as they lay at the "
                         "start), each player's number where it is:")
            marks = {cell: ",".join(seats) for cell, seats in ends.items()}
            lines.append(ascii_picture(parse_plan(plan_text), marks).rstrip("\n"))
        return lines

    # --- events ------------------------------------------------------------------------

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        lines: list[str] = []
        you = view.get("you")
        for e in events:
            if e.get("type") == "resolved":
                if you is not None:
                    self.notes(view).heard(you, e.get("said", ()))
                lines.extend(said_lines(view, e.get("said", ())))
            else:
                lines.append(json.dumps(e, sort_keys=True))
        return lines

    def awaiting(self, view: dict[str, Any]) -> str | None:
        gs = view.get("game_state") or {}
        you = view.get("you")
        if view.get("ended") or you is None or not view.get("started"):
            return None
        if gs.get("to_act") == you:
            if gs.get("phase") == "start":
                return "you have not chosen your start cell (start ROW,COLUMN; else the game master draws it)"
            missed = (view.get("options") or {}).get("missed_move", "lose")
            return "you have not moved (a missed move " + ("is a skip)" if missed == "skip" else "loses the game)")
        votes = gs.get("votes")
        if votes is not None and str(you) not in votes:
            return "you have not voted on the break (vote yes or vote no)"
        return None

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        return None


def pile_words(pile: Mapping[str, Any], full: Mapping[str, Any]) -> str:
    """What lies on a cell (the full view's `piles`), in words."""
    truth = list(full.get("truth", ()))
    parts = []
    for tid in pile.get("treasures", ()):
        parts.append("a true treasure" if tid < len(truth) and truth[tid] else "a fake treasure")
    for key, item in (("bullets", "bullet"), ("grenades", "grenade"), ("landmines", "landmine")):
        if pile.get(key):
            parts.append(_count(int(pile[key]), item))
    if pile.get("armed"):
        parts.append(f"{_count(int(pile['armed']), 'landmine')} set")
    for seat in pile.get("corpses", ()):
        parts.append(f"the corpse of player {seat + 1}")
    return ", ".join(parts) or "nothing"


def audience(view: Mapping[str, Any], said: Mapping[str, Any]) -> str:
    """Who heard it, when not everyone: `(to you alone)`, `(to player 2)`, `(told to nobody)`."""
    to = said.get("to")
    if to is None:
        return ""
    if not to:
        return "  (told to nobody)"
    if list(to) == [view.get("you")]:
        return "  (to you alone)"
    return "  (to player " + ", ".join(str(s + 1) for s in to) + ")"


def said_lines(view: Mapping[str, Any], said: Sequence[Mapping[str, Any]]) -> list[str]:
    """The game master's words, one a line: a move's answers indented under it, what was
    said to the viewer alone marked so, and the viewer's turn pointed out."""
    lines = []
    you = view.get("you")
    for s in said:
        text = str(s.get("text"))
        if s.get("key") == "turn" and s.get("seat") == you and you is not None:
            text += "  <- your move"
        if s.get("key") == "choose_start" and s.get("seat") == you and you is not None:
            text += "  <- you: start ROW,COLUMN"
        if s.get("key") == "wounded_may_order" and s.get("seat") == you and you is not None:
            text += "  <- you: order ROW,COLUMN or order none, then your move"
        seat = s.get("seat")
        if text.startswith("You") and seat is not None and seat != you:
            text = f"(to player {seat + 1}) {text}"  # said to everyone, in the words for the player
        indent = "" if s.get("key") in TOP else "    "
        lines.append(f"{indent}{text}{audience(view, s)}")
    return lines


TERMINAL = Terminal()
PICTURE = picture
"""`daedalus replay --picture`: the plan with every player's path (clients/labyrinth_replay.py)."""

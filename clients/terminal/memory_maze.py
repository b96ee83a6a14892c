"""Memory Maze in the terminal: the view (the board drawn) as text, typed moves as commands."""

from __future__ import annotations

from typing import Any

from clients.bots.memory_maze import move_command, parse_cell
from clients.terminal.common import game_state_to_play, seat_names, waiting_for_seats
from domain.games.memory_maze.maze import COLUMNS, Cell
from domain.games.memory_maze.moves import HELP, MoveError, parse_moves


class Terminal:
    def help(self, view: dict[str, Any] | None) -> str:
        """How to type moves; `pass` only in an edition with turns (crazy has none)."""
        gs = (view or {}).get("game_state") or {}
        turns = gs["turns"] if "turns" in gs else (view or {}).get("variant") != "crazy"
        passing = " `pass` (or `-`) plays zero moves in a turn." if turns else ""
        return (
            "Type a sequence of moves: e.g. `UURDL`, `u u r`, `up up right`, `N N E`, "
            f"`north east` (one style, any case).{passing} Also: view, history, help, quit."
        )

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        gs = game_state_to_play(view)
        text = line.strip()
        if text.lower().startswith("move "):
            text = text[5:]
        if text.lower() in ("pass", "-"):
            if not gs["turns"]:
                raise ValueError("there are no turns to pass in this edition; just wait")
            return move_command("", gs["turn"])
        if not text:
            raise ValueError(HELP)
        try:
            moves = parse_moves(text)
        except MoveError as exc:
            raise ValueError(str(exc)) from None
        return move_command(moves, gs["turn"] if gs["turns"] else None)

    def _attempt_text(self, view: dict[str, Any], a: dict[str, Any]) -> str:
        names = seat_names(view)
        who = "you" if a["seat"] == view.get("you") else names.get(a["seat"], f"seat {a['seat']}")
        moves = a["moves"] or "(no moves)"
        if a.get("timed_out"):
            return f"{who}: out of time, zero moves on {a['to']}"
        if a["bonked"]:
            return f"{who}: {moves} from {a['from']} BONKED (stays on {a['from']})"
        text = f"{who}: {moves} from {a['from']} -> {a['to']}"
        if a.get("collected"):
            text += f" (got {', '.join(a['collected'])})"
        return text

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        gs = view.get("game_state") or {}
        lines: list[str] = []
        head = f"== Memory Maze ({view.get('variant')}) · match {view.get('match')}"
        waiting = waiting_for_seats(view, head)
        if waiting is not None:
            return waiting
        you = view.get("you")
        names = seat_names(view)
        status = head
        if gs.get("turns") and gs.get("to_move") is not None:
            mover = "your" if gs["to_move"] == you else f"{names.get(gs['to_move'])}'s"
            status += f" · turn {gs['turn']}: {mover} move (at most {gs['max_moves']} moves)"
        if seconds_left is not None and not view.get("ended"):
            status += f" · {seconds_left:.0f} s left"
        lines.append(status)
        n = int(gs["size"])
        marks: dict[Cell, str] = {}
        for seat in gs["seats"]:
            for c in seat["targets"]:
                marks.setdefault(parse_cell(c), "+")
        for seat in gs["seats"]:
            marks[parse_cell(seat["position"])] = seat["letter"]
        lines.append("     " + " ".join(COLUMNS[x] for x in range(n)))
        for y in range(n - 1, -1, -1):
            row = " ".join(marks.get((x, y), ".") for x in range(n))
            lines.append(f"  {y + 1:>2} {row}")
        goal = gs["terms"]["goals"]
        for seat in gs["seats"]:
            tag = "you " if seat["seat"] == you else "    "
            text = (
                f"  {tag}{names.get(seat['seat'])} ({seat['letter']}, from {seat['start']}) on "
                f"{seat['position']} · {goal}: "
                + " ".join(f"{c}{'✓' if c in seat['visited'] else '·'}" for c in seat["targets"])
            )
            if seat.get("periods_left") is not None:
                text += f" · {seat['periods_left']} periods"
            if seat.get("reserve_ms") is not None:
                text += f" · reserve {seat['reserve_ms'] / 1000:.0f} s"
            if not gs.get("turns") and not view.get("ended"):
                text += " · ready" if seat.get("ready") else " · waiting"
            lines.append(text)
            if seat.get("last") is not None and gs.get("turns"):
                lines.append(f"      last: {self._attempt_text(view, seat['last'])}")
        if gs.get("colored_walls"):
            walls = ", ".join(
                f"{w['between'][0]}|{w['between'][1]} ({w['letter']})" for w in gs["colored_walls"]
            )
            lines.append(f"  colored walls (only their owner passes): {walls}")
        result = view.get("result")
        if view.get("ended") and result is not None:
            winner = result.get("winner")
            who = "a draw" if winner is None else f"{names.get(winner)} (seat {winner}) wins"
            lines.append(f"  MATCH OVER: {who} — {result.get('reason')}")
            maze = gs.get("maze") or {}
            lines.extend("    " + row for row in maze.get("drawing", []))
        return "\n".join(lines)

    def awaiting(self, view: dict[str, Any]) -> str | None:
        gs = view.get("game_state") or {}
        if view.get("ended") or view.get("you") is None or not gs.get("turns"):
            return None  # crazy: no turns, nothing to wait for
        return "it is your move" if gs.get("to_move") == view["you"] else None

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        gs = view.get("game_state") or {}
        if gs.get("history_kept", True) or view.get("ended"):
            return None
        lines = ["(this edition deletes each earlier sequence; the latest ones:)"]
        for seat in gs.get("seats", []):
            if seat.get("last") is not None:
                lines.append(self._attempt_text(view, seat["last"]))
        return lines

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        names = seat_names(view)
        lines: list[str] = []
        for e in events:
            kind = e.get("type")
            if kind == "turn_started":
                who = "your" if e["seat"] == view.get("you") else f"{names.get(e['seat'])}'s"
                lines.append(f"turn {e['turn']}: {who} move")
            elif kind == "period_spent":
                lines.append(
                    f"{names.get(e['seat'])} ran past the turn's time: a period is spent "
                    f"({e['periods_left']} left)"
                )
            elif kind == "moved":
                lines.append(self._attempt_text(view, _with_sequence(view, e)))
            elif kind == "cooldown_over":
                who = "you" if e["seat"] == view.get("you") else names.get(e["seat"], "?")
                lines.append(f"{who} may move again")
            elif kind == "game_over":
                lines.append(f"game over: {names.get(e['winner'])} wins ({e['reason']})")
            else:
                lines.append(str(e))
        return lines


TERMINAL = Terminal()


def _with_sequence(view: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """A `moved` event with its sequence: in the turn editions events leave it out and the
    view's `last` has it while it is the seat's latest (the rules delete older ones)."""
    if event.get("moves") is not None:
        return event
    for seat in (view.get("game_state") or {}).get("seats", []):
        last = seat.get("last")
        if seat.get("seat") == event.get("seat") and last and (last["turn"], last["at"]) == (
            event.get("turn"), event.get("at")
        ):
            return {**event, "moves": last["moves"]}
    return event

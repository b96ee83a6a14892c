"""Five-Card Trick in the terminal: the view as text, typed lines as commands.

Commands are built by the same helpers the bots use (clients/bots/five_card_trick.py),
and what a seat may not play now is asked of the rules module, as the bots do.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from clients.bots.five_card_trick import ACTIONS, disregarded, seat_state, submit, use_item
from clients.terminal.common import game_state_to_play, seat_names, waiting_for_seats
from domain.games import five_card_trick as fct

HELP_HEAD = """\
commands (round is filled in for you):
  score grow              submit two actions (names may be shortened: sc gr cl st bl)
  claim block:steal       play Block, naming the action it blocks"""
HELP_FINAL = """\
  score claim +overload   use an item in the submission (+overload, +limit_reset)
  claim claim             play a card twice
  item claim_priority     take the pot with Claim Priority after a tied Claim"""
HELP_TAIL = """\
  none                    submit no action
  view | (empty line)     show the match again, with the time left
  history                 every event so far
  help | quit"""
DMO = """\
(DMO) marks the Death Match Opponent: if the chips are still tied after the last round
the match may reach, the DMO wins{final}."""


class Terminal:
    def help(self, view: dict[str, Any] | None) -> str:
        """The commands of the match's variant (items and doubled cards only in `final`),
        and what DMO means."""
        variant = view.get("variant") if view is not None else None
        final = variant in (None, "final")
        parts = [HELP_HEAD, HELP_FINAL, HELP_TAIL] if final else [HELP_HEAD, HELP_TAIL]
        if variant is None:
            parts[1] = "\n".join(f"{line}  (final only)" for line in HELP_FINAL.splitlines())
        text = "\n".join(parts)
        first = {None: " (in final, more unused items wins first)", "final": " (more unused items wins first)"}
        return f"{text}\n" + DMO.format(final=first.get(variant, ""))

    @staticmethod
    def _names(view: dict[str, Any]) -> dict[str, str]:
        gs = view.get("game_state") or {}
        terms = gs.get("terms") or {}
        names: dict[str, str] = terms.get("actions") or {a: a.title() for a in ACTIONS}
        return names

    @staticmethod
    def _chips(view: dict[str, Any], n: int) -> str:
        terms = (view.get("game_state") or {}).get("terms") or {}
        word = terms.get("chip", "chip") if n == 1 else terms.get("chip_plural", "chips")
        return f"{n} {word}"

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        gs = game_state_to_play(view)
        assert view is not None  # game_state_to_play refuses None
        round_ = gs["round"]
        names = self._names(view)
        words = line.replace(",", " ").split()
        if words and words[0].lower() == "submit":
            words = words[1:]
        if words and words[0].lower() in ("item", "use"):
            if len(words) != 2:
                raise ValueError("usage: item claim_priority")
            item = fct.parse_item(words[1])
            if item is None:
                raise ValueError(f"{words[1]!r} is not an item ({', '.join(fct.ITEMS)})")
            return use_item(round_, item)
        if [w.lower() for w in words] in (["none"], ["pass"], ["-"]):
            return submit(round_, [])
        actions: list[str] = []
        items: list[str] = []
        block: str | None = None
        for word in words:
            if word.startswith("+"):
                item = fct.parse_item(word[1:])
                if item is None:
                    raise ValueError(f"{word[1:]!r} is not an item ({', '.join(fct.ITEMS)})")
                items.append(item)
                continue
            head, sep, target = word.partition(":")
            if not sep:
                head, sep, target = word.partition("=")
            action = self._action(head, names)
            if sep:
                if action != "block":
                    raise ValueError(f"only Block names a target ({word!r})")
                block = self._action(target, names)
            actions.append(action)
        if not actions and not items:
            raise ValueError("type actions, e.g. `score grow` (or `help`)")
        if "block" in actions and block is None:
            raise ValueError(
                f"name what {names['block']} blocks, e.g. `{names['block'].lower()}:{names['claim'].lower()}`"
            )
        return submit(round_, actions, block, items)

    @staticmethod
    def _action(word: str, names: dict[str, str]) -> str:
        key = word.strip().lower()
        if not key:
            raise ValueError("an empty action name")
        spellings = {a: {a, names.get(a, a).lower()} for a in ACTIONS}
        exact = [a for a, spelled in spellings.items() if key in spelled]
        if exact:
            return exact[0]
        found = [a for a, spelled in spellings.items() if any(s.startswith(key) for s in spelled)]
        if len(found) == 1:
            return found[0]
        shown = ", ".join(names.get(a, a) for a in ACTIONS)
        if found:
            raise ValueError(f"{word!r} could be {', '.join(names[a] for a in found)}")
        raise ValueError(f"{word!r} is not an action ({shown})")

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        gs = view.get("game_state") or {}
        names = self._names(view)
        terms = gs.get("terms") or {}
        light_plural = terms.get("light_plural", "lights")
        pot_word = terms.get("pot", "pot")
        you = view.get("you")
        lines: list[str] = []
        head = f"== Five-Card Trick ({view.get('variant')}) · match {view.get('match')}"
        waiting = waiting_for_seats(view, head)
        if waiting is not None:
            return waiting
        round_line = f"{head} · round {gs.get('round')} of {gs.get('end_round')}"
        if gs.get("end_round") != gs.get("rounds"):
            round_line += f" (extended; at most {gs.get('max_rounds')})"
        round_line += f" · {pot_word} {gs.get('pot')}"
        if seconds_left is not None and not view.get("ended"):
            round_line += f" · {seconds_left:.0f} s left"
        lines.append(round_line)
        for seat in gs.get("seats", []):
            s = seat["seat"]
            tag = "you " if s == you else "    "
            name = seat.get("name") or f"seat {s}"
            dmo = " (DMO)" if seat.get("dmo") else ""
            lit = " ".join(names[a] if a in seat["lights"] else "·" for a in ACTIONS)
            text = f"  {tag}{name}{dmo}: {self._chips(view, seat['chips'])} | {light_plural}: {lit}"
            hist = seat.get("history") or {}
            previous = [
                "+".join(names[a] for a in h) or "-" for h in (hist.get("r-2"), hist.get("r-1")) if h is not None
            ]
            if previous:
                text += f" | played: {' / '.join(previous)}"
            if seat.get("blocked"):
                text += f" | blocked now: {', '.join(names[a] for a in seat['blocked'])}"
            if seat.get("items") or seat.get("used_items"):
                held = ", ".join(terms.get("items", {}).get(i, i) for i in seat.get("items", []))
                text += f" | items: {held or 'none left'}"
            if not view.get("ended"):
                text += " | submitted" if seat.get("submitted") else " | thinking"
            lines.append(text)
        last = gs.get("last_round")
        if last is not None:
            lines.append(f"  last round ({last['round']}):")
            lines.extend("    " + line for line in self._resolved_lines(view, last))
        if you is not None and not view.get("ended"):
            mine = gs["seats"][you]
            pending = mine.get("pending")
            if pending is not None:
                text = "+".join(names[a] for a in pending["actions"]) or "no action"
                if pending.get("block"):
                    text += f" ({names['block']} {names[pending['block']]})"
                if pending.get("items"):
                    text += " using " + ", ".join(pending["items"])
                lines.append(f"  your submission: {text}")
                for warning in pending.get("warnings", []):
                    lines.append(f"    warning: {warning}")
            banned = self._restrictions(view, mine)
            if banned:
                lines.append(f"  not allowed for you now: {banned}")
            if mine.get("claim_priority_available"):
                lines.append("  you may use Claim Priority now: `item claim_priority`")
        result = view.get("result")
        if view.get("ended") and result is not None:
            winner = result.get("winner")
            seats = view.get("seats", [])
            who = "a draw" if winner is None else f"{seats[winner].get('name')} (seat {winner}) wins"
            lines.append(f"  MATCH OVER: {who} — {result.get('reason')}; scores {list(result.get('scores') or ())}")
        return "\n".join(lines)

    def _restrictions(self, view: dict[str, Any], seat: dict[str, Any]) -> str:
        gs = view["game_state"]
        names = self._names(view)
        state = seat_state(seat)
        variant = gs["variant"]
        out = []
        for action in ACTIONS:
            gone = dict(disregarded(state, variant, (action,)))
            if action in gone:
                out.append(f"{names[action]} ({fct.reason_text(gone[action], fct.TERMS[variant])})")
        singles = {a for a in ACTIONS if disregarded(state, variant, (a,))}
        for pair in combinations(ACTIONS, 2):
            if set(pair) & singles:
                continue
            if disregarded(state, variant, pair):
                out.append(f"{names[pair[0]]}+{names[pair[1]]} together (same pair as last round)")
        return "; ".join(out)

    def _resolved_lines(self, view: dict[str, Any], event: dict[str, Any]) -> list[str]:
        names = self._names(view)
        players = seat_names(view)
        lines = []
        for seat in event["seats"]:
            who = players.get(seat["seat"], f"seat {seat['seat']}")
            if not seat["submitted"]:
                played = "missed the round"
            elif not seat["plays"]:
                played = "played nothing"
            else:
                parts = []
                for p in seat["plays"]:
                    text = names[p["action"]] + (f" x{p['copies']}" if p["copies"] > 1 else "")
                    if p["action"] == "block" and seat.get("block"):
                        text += f"({names[seat['block']]})"
                    status = p["status"] if p["status"] in ("resolved", "blocked") else (
                        f"{p['status']}: {p.get('reason_text') or p.get('reason')}"
                    )
                    parts.append(f"{text} [{status}]")
                played = ", ".join(parts)
            if seat.get("items"):
                played += " using " + ", ".join(seat["items"])
            gains = f" +{seat['gained']}" if seat["gained"] else ""
            bonus = " (all lights bonus)" if seat.get("bonus") else ""
            lines.append(f"{who}: {played} → {self._chips(view, seat['chips'])}{gains}{bonus}")
        pot = f"pot {event['pot_before']}"
        if event.get("grown"):
            pot += f" +{event['grown']}"
        if event.get("taken_by") is not None:
            pot += f", taken by {players.get(event['taken_by'])}; now {event['pot_after']}"
        else:
            pot += f" → {event['pot_after']}"
        lines.append(pot)
        return lines

    def awaiting(self, view: dict[str, Any]) -> str | None:
        seats = (view.get("game_state") or {}).get("seats") or []
        you = view.get("you")
        if not view.get("started") or view.get("ended") or you is None or you >= len(seats):
            return None
        return None if seats[you].get("submitted") else "you have not submitted"

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        return None  # nothing shown is ever taken back

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        players = seat_names(view)
        lines: list[str] = []
        for e in events:
            kind = e.get("type")
            if kind == "round_started":
                lines.append(f"round {e['round']} begins")
            elif kind == "submitted":
                who = "you" if e["seat"] == view.get("you") else players.get(e["seat"])
                lines.append(f"{who} submitted for round {e['round']}")
            elif kind == "round_resolved":
                lines.append(f"round {e['round']} results:")
                lines.extend("  " + line for line in self._resolved_lines(view, e))
            elif kind == "round_replayed":
                lines.append(f"both missed round {e['round']}: it is played again")
            elif kind == "priority_claimed":
                lines.append(
                    f"{players.get(e['seat'])} uses Claim Priority and takes {e['took']} "
                    f"(now {e['chips']}); the round's clock restarts"
                )
            elif kind == "extended":
                lines.append(f"tied after round {e['after_round']}: extended to round {e['until']}")
            elif kind == "game_over":
                lines.append(
                    f"game over after {e['rounds']} rounds: {players.get(e['winner'])} wins "
                    f"({e['reason']}); chips {e['chips']}"
                )
            else:
                lines.append(str(e))
        return lines


TERMINAL = Terminal()

"""Keys to Success / Gatekeeping in the terminal: the view as text, typed lines as commands."""

from __future__ import annotations

from typing import Any

from clients.bots.keys_to_success import chat, submit, vote
from clients.terminal.common import game_state_to_play, seat_names, waiting_for_seats


class Terminal:
    def help(self, view: dict[str, Any] | None) -> str:
        """The commands, in the variant's words (gates and cards, or their names)."""
        terms = ((view or {}).get("game_state") or {}).get("terms") or {}
        gate, gates = terms.get("gate", "gate"), terms.get("gate_plural", "gates")
        card, cards = terms.get("card", "card"), terms.get("card_plural", "cards")
        return (
            "commands:\n"
            f"  A B 1 2        fight at {gates} A and B (adjacent) with {cards} 1 and 2 (strength 3)\n"
            f"  C 3            fight at {gate} C with {card} 3\n"
            "  say TEXT       a message to everyone in your level (this round's channel)\n"
            "  vote SEAT      (winners, after play) vote for the Elimination Candidate\n"
            "  view, history, help, quit"
        )

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        gs = game_state_to_play(view)
        text = line.strip()
        head, _, rest = text.partition(" ")
        if head.lower() in ("say", "chat", "/say"):
            if not rest.strip():
                raise ValueError("usage: say TEXT")
            return chat(rest.strip())
        if head.lower() == "vote":
            try:
                return vote(int(rest.strip()))
            except ValueError:
                raise ValueError("usage: vote SEAT (a loser's seat number)") from None
        words = text.replace(",", " ").replace("+", " ").split()
        if words and words[0].lower() == "submit":
            words = words[1:]
        level = gs.get("level") or {}
        names = {g["name"].casefold(): g["name"] for g in level.get("gates", [])}
        gates: list[str] = []
        cards: list[int] = []
        for word in words:
            if word.casefold() in names and not cards:
                gates.append(names[word.casefold()])
            elif word in ("1", "2", "3"):
                cards.append(int(word))
            else:
                known = " ".join(g["name"] for g in level.get("gates", []))
                raise ValueError(f"{word!r} is neither a gate of your level ({known}) nor a card 1, 2, 3")
        if not gates or not cards:
            raise ValueError("name one gate or two adjacent ones, then cards, e.g. `A B 1 2` (or `help`)")
        return submit(gs["round"], gates, cards)

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        gs = view.get("game_state") or {}
        names = seat_names(view)
        terms = gs.get("terms") or {}
        head = f"== {view.get('variant')} · match {view.get('match')}"
        waiting = waiting_for_seats(view, head)
        if waiting is not None:
            return waiting
        line = f"{head} · round {gs.get('round')} · {gs.get('phase')}"
        if seconds_left is not None and not view.get("ended"):
            line += f" · {seconds_left:.0f} s left"
        lines = [line]
        me = gs.get("me")
        level = gs.get("level")
        if me is not None:
            hand = " ".join(map(str, me["hand"])) or "none"
            lines.append(
                f"  you: {me['place']} · {terms.get('card_plural', 'cards')}: {hand} · "
                f"garnets {me['garnets']} · Pass {terms.get('gate_plural', 'gates')} {me['passes']}"
            )
        if level is not None:
            who = ", ".join(names.get(s, str(s)) for s in level["members"])
            lines.append(f"  in {level['place']}: {who}")
            if level["gates"]:
                shown = []
                for g in level["gates"]:
                    mark = {"open": "", "sealed": " (sealed)", "closed": " (closed)"}[g["status"]]
                    shown.append(f"{g['name']}[{g['kind'][0].upper()}]{mark}")
                lines.append(f"  {terms.get('gate_plural', 'gates')}: {'  '.join(shown)}")
        if me is not None and me.get("pending"):
            p = me["pending"]
            lines.append(f"  your submission: {'+'.join(map(str, p['cards']))} at {' and '.join(p['gates'])}")
        for c in gs.get("chat", []):
            lines.append(f"  [{c.get('place') or 'all'}] {names.get(c['seat'], c['seat'])}: {c['text']}")
        history = gs.get("history") or []
        if history and not gs.get("open"):
            lines.extend("  " + t for t in self._resolved_lines(view, history[-1]))
        results = gs.get("results")
        if results is not None:
            lines.append(
                f"  winners: {', '.join(names.get(s, str(s)) for s in results['winners']) or 'none'}; "
                f"losers: {', '.join(names.get(s, str(s)) for s in results['losers']) or 'none'}"
            )
            if results.get("ec") is not None:
                lines.append(f"  Elimination Candidate: {names.get(results['ec'])} ({results['ec_by']})")
        if view.get("ended") and view.get("result") is not None:
            lines.append(f"  MATCH OVER: {view['result'].get('reason')}")
        return "\n".join(lines)

    def _resolved_lines(self, view: dict[str, Any], event: dict[str, Any]) -> list[str]:
        names = seat_names(view)
        if "levels" in event:
            out = [f"round {event['round']} results:"]
            for level in event["levels"]:
                for r in level["results"]:
                    went = f"entered {r['entered']}" if r["entered"] else "-"
                    out.append(
                        f"  {level['place']}: {names.get(r['seat'])}: {'+'.join(r['gates']) or '-'} "
                        f"with {'+'.join(map(str, r['cards'])) or '-'} → {went}"
                    )
            return out
        if "results" not in event:
            return [f"round {event['round']} is over"]
        out = [f"round {event['round']} in {event['place']}:"]
        for r in event["results"]:
            went = f"entered {r['entered']}" if r["entered"] else "stayed"
            out.append(f"  {names.get(r['seat'])}: {r['cards_used']} card(s) used, {went}")
        return out

    def awaiting(self, view: dict[str, Any]) -> str | None:
        gs = view.get("game_state") or {}
        me = gs.get("me") or {}
        if view.get("ended") or view.get("you") is None:
            return None
        if gs.get("phase") == "play" and me.get("can_submit") and not me.get("submitted"):
            return "you have not submitted"
        winners = (gs.get("results") or {}).get("winners", ())
        if gs.get("phase") == "vote" and view["you"] in winners and me.get("vote") is None:
            return "you have not voted"
        return None

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        return None  # nothing shown is ever taken back

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        names = seat_names(view)
        lines: list[str] = []
        for e in events:
            kind = e.get("type")
            if kind == "round_started":
                where = f" in {e['place']}" if "place" in e else ""
                lines.append(f"round {e['round']} begins{where}")
            elif kind == "submitted":
                lines.append(f"you submitted {'+'.join(map(str, e['cards']))} at {' and '.join(e['gates'])}")
            elif kind == "chat":
                lines.append(f"[{e.get('place') or 'all'}] {names.get(e['seat'])}: {e['text']}")
            elif kind == "round_resolved":
                lines.extend(self._resolved_lines(view, e))
            elif kind == "play_ended":
                lines.append(
                    f"play is over after round {e['round']}: winners "
                    f"{', '.join(names.get(s, str(s)) for s in e['winners']) or 'none'}, losers "
                    f"{', '.join(names.get(s, str(s)) for s in e['losers']) or 'none'}"
                )
            elif kind == "vote_cast":
                lines.append(f"{names.get(e['seat'])} has voted")
            elif kind == "game_over":
                lines.append(f"game over: {e['reason']}")
            else:
                lines.append(str(e))
        return lines


TERMINAL = Terminal()


"""Escalator in the terminal: the view as text, typed lines as commands."""

from __future__ import annotations

from typing import Any

from clients.bots.escalator import decode, fetch
from clients.terminal.common import game_state_to_play, seat_names, waiting_for_seats

HELP = """\
commands:
  COMMAND SEAT        fetch COMMAND on SEAT this round (e.g. `Shove 3`; `fetch Shove 3` too)
  decode COMMAND      activate COMMAND of those you were given last round (`activate` too)
  view, history, help, quit (help also lists the edition's commands, * when disabled)
A Fetch or Decode may be sent again until the step closes; the last one counts."""


def command_text(c: dict[str, Any]) -> str:
    """A command's programs in words: `target: down 2; user: nothing`."""
    return f"target: {', '.join(c['target']) or 'nothing'}; user: {', '.join(c['user']) or 'nothing'}"


def _names(view: dict[str, Any]) -> dict[int, str]:
    return seat_names(view)


def pipeline(gs: dict[str, Any]) -> str:
    f, d = gs.get("fetch_round"), gs.get("decode_round")
    return (
        f"step {gs.get('step')}: Fetch {'round ' + str(f) if f else '-'} | "
        f"Decode {'round ' + str(d) if d else '-'} | "
        f"Execute {'round ' + str(d) if d else '-'} at the end"
    )


class Terminal:
    def help(self, view: dict[str, Any] | None) -> str:
        return HELP + "\n" + self.commands_text(view)

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        words = line.strip().split()
        gs = game_state_to_play(view)
        names = {c["name"].casefold(): c["name"] for c in gs["edition"]["commands"]}
        if words and words[0].lower() in ("decode", "activate", "choose"):
            if len(words) != 2:
                raise ValueError("usage: decode COMMAND (one of the commands you were given)")
            if gs.get("decode_round") is None:
                raise ValueError("no round is in Decode in this step")
            return decode(gs["decode_round"], names.get(words[1].casefold(), words[1]))
        if words and words[0].lower() == "fetch":
            words = words[1:]
        if len(words) != 2:
            raise ValueError("usage: COMMAND SEAT, e.g. `Shove 3` (or `help`)")
        command, seat = words
        seat = seat.lstrip("@#")
        if not seat.isdigit():
            raise ValueError(f"{words[1]!r} is not a seat number")
        if command.casefold() not in names:
            raise ValueError(f"there is no command {command!r} (`help` lists them)")
        if gs.get("fetch_round") is None:
            raise ValueError("no round is being fetched in this step (the pipeline drains)")
        return fetch(gs["fetch_round"], names[command.casefold()], int(seat))

    def commands_text(self, view: dict[str, Any] | None) -> str:
        gs = (view or {}).get("game_state") or {}
        edition = gs.get("edition")
        if not edition:
            return "the commands are shown once the match has started"
        off = set(gs.get("disabled", ()))
        lines = [f"{edition['title']}:"]
        for c in edition["commands"]:
            mark = "*" if c["name"] in off else " "
            lines.append(f" {mark} {c['name']:<10} {c['colour']:<6} {command_text(c)}")
        return "\n".join(lines)

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        gs = view.get("game_state") or {}
        names = _names(view)
        head = f"== escalator · match {view.get('match')}"
        waiting = waiting_for_seats(view, head)
        if waiting is not None:
            return waiting
        line = f"{head} · {pipeline(gs)}" if gs.get("phase") == "play" else f"{head} · {gs.get('phase')}"
        if seconds_left is not None and not view.get("ended"):
            line += f" · {seconds_left:.0f} s left"
        lines = [line]
        for p in gs.get("players", []):
            state = f"fell in step {p['fell']}" if p["fell"] is not None else f"level {p['level']:>2} (lock {p['cap']})"
            tags = []
            if p["seat"] in gs.get("fetchers", ()):
                tags.append("fetch")
            if p["seat"] in gs.get("deciders", ()):
                tags.append("decode")
            owes = f" · owes {' and '.join(tags)}" if tags else ""
            lines.append(f"  seat {p['seat']} {names.get(p['seat'], '')}: {state}{owes}")
        info = gs.get("decode_info")
        if info:
            given = ", ".join(
                f"{names.get(x['seat'])} {x['count']} ({'/'.join(x['colours'])})" for x in info["given"] if x["count"]
            )
            lines.append(f"  round {info['round']} given: {given or 'nothing'}; used: {', '.join(info['used']) or 'none'}")
            for n in info.get("named", ()):
                lines.append(f"  {n['command']} was picked by {names.get(n['users'][0])} and {names.get(n['users'][1])}")
        me = gs.get("me")
        if me is not None:
            lines.append(f"  you: level {me['level']} (lock {me['cap']}) · points {me['points']}")
            if me.get("given"):
                lines.append("  given to you: " + ", ".join(f"{g['command']} ({g['colour']})" for g in me["given"]))
            block = me.get("block")
            if block and me.get("must_fetch"):
                lines.append(
                    f"  rounds {block['rounds'][0]}-{block['rounds'][1]}: used {', '.join(block['used']) or 'nothing'}; "
                    f"still owed {', '.join(block['needed']) or 'nothing'} ({block['rounds_left']} round(s) left after this)"
                )
            if me.get("fetch"):
                lines.append(f"  your Fetch: {me['fetch']['command']} on seat {me['fetch']['target']}")
            if me.get("decode"):
                lines.append(f"  your Decode: {me['decode']}")
        if gs.get("last_step"):
            lines.extend("  " + t for t in self._resolved_lines(view, gs["last_step"]))
        results = gs.get("results")
        if results is not None:
            lines.append(f"  {results['reason']}")
            lines.append(f"  garnets: {results['garnets']}")
        if view.get("ended") and view.get("result") is not None:
            lines.append(f"  MATCH OVER: {view['result'].get('reason')}")
        return "\n".join(lines)

    def _resolved_lines(self, view: dict[str, Any], e: dict[str, Any]) -> list[str]:
        names = _names(view)
        out = [f"step {e['step']} closed:"]
        if e.get("executed"):
            moves = ", ".join(
                f"{names.get(s)} {a}->{b}" for s, (a, b) in enumerate(zip(e["levels_before"], e["levels"], strict=True)) if a != b
            )
            out.append(f"  round {e['decode_round']} executed: {moves or 'nobody moved'}")
            if e.get("third"):
                out.append(f"  ranked third: {', '.join(names.get(s, str(s)) for s in e['third'])}")
        if e.get("missed"):
            out.append(f"  missed a Fetch (down 2): {', '.join(names.get(s, str(s)) for s in e['missed'])}")
        if e.get("fell"):
            out.append(f"  fell: {', '.join(names.get(s, str(s)) for s in e['fell'])}")
        if e.get("crowded"):
            out.append(f"  crowded out (3 or more pickers): {', '.join(e['crowded'])}")
        you = e.get("you")
        if you:
            if you.get("pick"):
                p = you["pick"]
                how = "crowded out" if p["crowded"] else "used"
                out.append(f"  your {p['command']} on {names.get(p['target'])}: {how}")
            if e.get("executed"):
                out.append(
                    f"  on you: {', '.join(you['activated_on_you']) or 'nothing'}; yours activated: "
                    f"{'yes' if you['yours_activated'] else 'no'}; you descended {you['descent']}; points {you['points']}"
                )
            for x in you.get("learned", ()):
                if x["kind"] == "points":
                    out.append(f"  {x['command']}: {names.get(x['about'])} has {x['value']} points")
                else:
                    out.append(f"  {x['command']}: it was {names.get(x['about'])} who used it on you")
        return out

    def awaiting(self, view: dict[str, Any]) -> str | None:
        gs = view.get("game_state") or {}
        me = gs.get("me") or {}
        if view.get("ended") or view.get("you") is None or gs.get("phase") != "play":
            return None
        owed = []
        if me.get("must_fetch") and me.get("fetch") is None:
            owed.append("your Fetch (a missed Fetch drops you 2 levels)")
        if me.get("must_decode") and me.get("decode") is None:
            owed.append("your Decode (else every command given to you activates)")
        return "you have not sent " + " and ".join(owed) if owed else None

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        return None

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        names = _names(view)
        lines: list[str] = []
        for e in events:
            kind = e.get("type")
            if kind == "step_started":
                lines.append(pipeline(e))
            elif kind == "fetched":
                lines.append(f"your Fetch: {e['command']} on {names.get(e['target'])}")
            elif kind == "decoded":
                lines.append(f"your Decode: {e['command']}")
            elif kind == "step_resolved":
                lines.extend(self._resolved_lines(view, e))
            elif kind == "auto_resolved":
                lines.append(f"every command is disabled: auto-resolution, {e['steps']} step(s) of 1 level")
            elif kind == "game_over":
                lines.append(f"game over: {e['reason']}")
            else:
                lines.append(str(e))
        return lines


TERMINAL = Terminal()

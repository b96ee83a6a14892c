"""`daedalus replay`: a finished match's log, printed round by round (and verified).

The whole log is folded through the engine as the server folded it. Printed are either
its entries with their events (the default), or, with a viewer, that viewer's updates
numbered as it received them, in its terminal's words; `round_no` narrows either to one
round. `print_picture` draws, instead, a game's picture of the match up to an entry
(Labyrinth: the plan with every player's path).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from clients.terminal import TERMINALS, Terminal, engine_line, event_lines

if TYPE_CHECKING:
    from domain.engine import Entry, MatchState, Outcome
    from projections.contract import Viewer
    from projections.registry import Hosted


def print_replay(
    entries: Sequence[Any],
    out: Any = None,
    *,
    round_no: int | None = None,
    viewer: Any = None,
    say_failure: bool = True,
) -> bool:
    """Print a log round by round; False (after printing what folded) if it does not fold.

    `round_no`: only that round's entries (all are folded). `viewer` (a projections
    Viewer): not the whole log but that viewer's updates, numbered as it received them,
    in its terminal's words. `say_failure` False: the entry that does not fold is not
    named here (print_verify names it next)."""
    from domain import engine

    out = out or sys.stdout
    if not entries:
        print("the log is empty", file=out)
        return False
    body = entries[0].body if isinstance(entries[0].body, dict) else {}
    host = _print_header(body, out)
    if host is None:
        return False
    if is_sealed_log(entries):
        return _print_public(host, entries, out, round_no=round_no, viewer=viewer, say_failure=say_failure)
    try:
        ms = engine.open_match(host.rules, entries[0])
    except engine.IntegrityError as exc:
        if say_failure:
            print(f"FAILED at {exc}", file=out)
        return False
    if viewer is not None and not _print_viewer(ms, viewer, out):
        return False
    terminal = TERMINALS.get(str(body.get("game")))
    replay = _Replay(host, terminal, ms, out, round_no=round_no, viewer=viewer, say_failure=say_failure)
    for entry in entries[1:]:
        if not replay.fold(entry):
            return False
    return replay.finish()


def _print_header(body: dict[str, Any], out: TextIO) -> Hosted | None:
    """The create entry's match, options and commitment; the hosted game (None, said
    why, if the log's game is not hosted here)."""
    from projections.registry import UnknownGame, hosted

    try:
        host = hosted(str(body.get("game")))
    except UnknownGame as exc:
        print(f"cannot replay: {exc}", file=out)
        return None
    print(
        f"match {body.get('match')}: {body.get('game')} / {body.get('variant')} "
        f"(rules {body.get('rules_version')})",
        file=out,
    )
    print(f"options {json.dumps(body.get('options'), sort_keys=True)}", file=out)
    print(f"commitment {body.get('commitment')}", file=out)
    return host


def _print_viewer(ms: MatchState, viewer: Viewer, out: TextIO) -> bool:
    """Whose updates follow; False (said why) if the match has no such seat."""
    if viewer.seat is not None and viewer.seat >= len(ms.names):
        print(f"no seat {viewer.seat}: this match has seats 0 to {len(ms.names) - 1}", file=out)
        return False
    who = "a spectator" if viewer.seat is None else f"seat {viewer.seat}"
    print(f"as {who} saw it (update numbers as {who} received them)", file=out)
    return True


class _Replay:
    """The fold of a log, entry by entry, and what of it is printed."""

    def __init__(
        self,
        host: Hosted,
        terminal: Terminal | None,
        ms: MatchState,
        out: TextIO,
        *,
        round_no: int | None,
        viewer: Viewer | None,
        say_failure: bool = True,
    ) -> None:
        self.host = host
        self.say_failure = say_failure
        self.terminal = terminal
        self.ms = ms
        self.out = out
        self.round_no = round_no
        self.viewer = viewer
        self.shown_round: int | None = None  # the round whose header was printed last
        self.updates = 0  # the viewer's updates so far
        self.seen_round = round_no is None  # whether any entry of round_no was folded

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def fold(self, entry: Entry) -> bool:
        """Fold one entry and print what is wanted of it; False (said why) if it does not fold."""
        from domain import engine

        before = self.ms
        try:
            after, outcome = engine.apply(self.ms, entry)
        except engine.IntegrityError as exc:
            if self.say_failure:
                self.say(f"FAILED at {exc}")
            return False
        return self.show(entry, before, after, outcome)

    def show(self, entry: Entry, before: MatchState, after: MatchState, outcome: Outcome) -> bool:
        """Print what is wanted of an entry folded (`before` and `after` it, what it did)."""
        from projections.common import project_events

        self.ms = after
        round_ = self.host.rules.round_of(before.game_state) if before.started else None
        wanted = self.round_no is None or round_ == self.round_no
        self.seen_round = self.seen_round or wanted
        if self.viewer is None:
            if wanted:
                self._round_header(round_)
                self._print_entry(entry, before, outcome)
            return True
        shown = project_events(self.host.views, self.ms, outcome, self.viewer)
        if not shown:
            return True  # no update for this viewer
        self.updates += 1
        if wanted:
            self._round_header(round_)
            self._print_update(entry, before, shown)
        return True

    def _round_header(self, round_: int | None) -> None:
        if round_ is not None and round_ != self.shown_round:
            self.say(f"--- round {round_} ---")
            self.shown_round = round_

    def _print_update(self, entry: Entry, before: MatchState, shown: list[dict[str, Any]]) -> None:
        """One of the viewer's updates, as its terminal showed the events."""
        from projections.common import match_view

        assert self.viewer is not None
        self.say(f"update {self.updates} +{(entry.ts - before.created) / 1000:.3f}s")
        view = match_view(self.host.views, self.ms, self.viewer)
        for line in event_lines(self.terminal, view, shown):
            self.say(f"    {line}")

    def _print_entry(self, entry: Entry, before: MatchState, outcome: Outcome) -> None:
        """One entry of the whole log: who sent what, its events, rejection and warnings."""
        from projections.common import engine_event

        self.say(_entry_line(entry, before, show_body=outcome.rejection is not None or not outcome.events))
        for event in outcome.events:
            projected = engine_event(event)
            if projected is not None:
                self.say(f"    {engine_line(projected)}")
            else:
                for line in self.host.views.describe(self.ms, event):
                    self.say(f"    {clock_times(line, self.ms.created)}")
        if outcome.rejection is not None:
            self.say(f"    rejected ({outcome.rejection.code}): {outcome.rejection.reason}")
        for warning in outcome.warnings:
            self.say(f"    warning: {warning}")

    def finish(self) -> bool:
        """The result (or that the log ends first); False if round_no was never reached."""
        if not self.seen_round:
            self.say(f"no round {self.round_no} in this log")
        ms = self.ms
        if ms.result is not None:
            r = ms.result
            winner = "draw" if r.winner is None else f"seat {r.winner} ({ms.names[r.winner]})"
            self.say(f"result: {winner} after {r.rounds} rounds, {r.reason}" + _scores(r.scores))
        else:
            self.say("the log ends before the match does")
        return self.seen_round


_MILLIS = re.compile(r"\b(\d+) ms\b")


def clock_times(line: str, created: int) -> str:
    """`line` with each server time in it (`N ms`, milliseconds since the epoch, as the
    rules' descriptions give deadlines) as a time of day in UTC and the time since the
    match was created (`+61.000s`, as entries are dated); a duration (less than the
    creation time) is left as it is."""

    def as_time(found: re.Match[str]) -> str:
        ms = int(found.group(1))
        if ms < created:
            return found.group(0)
        at = datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S UTC")
        return f"{at} (+{(ms - created) / 1000:.3f}s)"

    return _MILLIS.sub(as_time, line)


def _entry_line(entry: Any, before: Any, *, show_body: bool) -> str:
    at = (entry.ts - before.created) / 1000
    head = f"#{entry.seq} +{at:.3f}s {entry.kind}"
    if entry.seat is not None:
        name = before.names[entry.seat] if 0 <= entry.seat < len(before.names) else None
        head += f" seat {entry.seat}" + (f" ({name})" if name else "")
    if show_body and entry.kind == "command":
        head += f" {json.dumps(entry.body, sort_keys=True)}"
    return head


def print_picture(
    entries: Sequence[Any], kind: str, *, upto: int | None = None, out_file: str | None = None, out: Any = None
) -> bool:
    """`replay --picture KIND`: the game's picture of the match up to entry `upto` (None:
    the whole log), printed, or written to `out_file`. A game draws one when its terminal
    module (clients/terminal/<game>.py) has `PICTURE(entries, kind, upto) -> str`, which
    raises ValueError saying why it cannot; False (said why) when there is no picture."""
    from clients.per_game import find

    out = out or sys.stdout
    body = entries[0].body if entries and isinstance(entries[0].body, dict) else {}
    game = str(body.get("game"))
    module = find("clients.terminal", game)
    draw = getattr(module, "PICTURE", None) if module is not None else None
    if draw is None:
        print(f"cannot draw it: {game} has no picture of a match", file=out)
        return False
    try:
        text = str(draw(entries, kind, upto))
    except ValueError as exc:
        print(f"cannot draw it: {exc}", file=out)
        return False
    if out_file is None:
        print(text, end="", file=out)
        return True
    try:
        with open(out_file, "w", encoding="utf-8") as written:
            written.write(text)
    except OSError as exc:
        print(f"cannot write {out_file}: {exc}", file=out)
        return False
    print(f"wrote the {kind} picture to {out_file}", file=out)
    return True


def print_verify(entries: list[Any], out: Any = None) -> bool:
    from domain.engine import verify
    from projections.registry import rules_by_name

    out = out or sys.stdout
    if is_sealed_log(entries):
        return _print_verify_public(entries, out)
    checked = verify(rules_by_name(), entries)
    if checked.ok:
        if checked.setup == "seed":
            print("setup: drawn again from the revealed seed, and the same", file=out)
        elif checked.setup == "host":
            print("setup: given by the match's host, not drawn from the seed", file=out)
        if checked.log_version >= 2 and checked.setup is not None:
            print(
                f"entropy: {checked.entropy_given} of {checked.seats} seats gave their own; every "
                "draw was made again from the revealed seed and the recorded entropy",
                file=out,
            )
        print(f"verify: ok ({checked.entries} entries, commitment {checked.commitment})", file=out)
        return True
    where = f"entry {checked.failed_seq}"
    if checked.failed_round is not None:
        where += f" (round {checked.failed_round})"
    reason = checked.failure or "unknown failure"
    if reason.startswith(where + ": "):
        reason = reason[len(where) + 2 :]
    print(f"verify: FAILED at {where}: {reason}", file=out)
    return False


# --- public logs that withhold sealed values (projections/seal.py) ----------------------


def is_sealed_log(entries: Sequence[Any]) -> bool:
    """Whether a log is the public log of a match that seals (its audit key withheld)."""
    from projections.seal import is_public_log

    return is_public_log(entries)


def _games() -> dict[str, Any]:
    from projections.registry import GAMES

    return {name: (h.rules, h.views) for name, h in GAMES.items()}


def verify_entries(entries: list[Any]) -> Any:
    """A log verified, whichever kind it is: a public log that withholds sealed values by
    projections.seal.verify_public, any other by domain.engine.verify (both answers have
    `ok`, `failure`, `entries` and `commitment`)."""
    from domain.engine import verify
    from projections.registry import rules_by_name
    from projections.seal import verify_public

    return verify_public(_games(), entries) if is_sealed_log(entries) else verify(rules_by_name(), entries)


def verify_log(entries: list[Any]) -> tuple[bool, str | None]:
    """Whether a log verifies, whichever kind it is (and if not, why)."""
    checked = verify_entries(entries)
    return checked.ok, checked.failure


def _print_verify_public(entries: list[Any], out: TextIO) -> bool:
    from projections.seal import verify_public

    checked = verify_public(_games(), entries)
    if not checked.ok:
        print(f"verify: FAILED at {checked.failure}", file=out)
        return False
    if checked.setup == "seed":
        print("setup: drawn again from the revealed seed, and the same", file=out)
    elif checked.setup == "host":
        print("setup: given by the match's host, not drawn from the seed", file=out)
    if checked.setup is not None:
        print(
            f"entropy: {checked.entropy_given} of {checked.seats} seats gave their own; every "
            "draw was made again from the revealed seed and the recorded entropy",
            file=out,
        )
    how = (
        "each alone, the others as in one possible match (every combination is too many)"
        if checked.alone else "in every combination"
    )
    if checked.withheld:
        print(
            f"sealed: {checked.withheld} entries withhold what the rules keep secret; every "
            f"value they could hold was tried, {how}, up to {checked.tried} at one entry, "
            "and none changes what anyone is shown",
            file=out,
        )
    else:
        print("sealed: no entry withholds anything; the whole log is in clear", file=out)
    print(f"verify: ok ({checked.entries} entries, commitment {checked.commitment})", file=out)
    return True


def _print_public(
    host: Hosted,
    entries: Sequence[Any],
    out: TextIO,
    *,
    round_no: int | None,
    viewer: Viewer | None,
    say_failure: bool,
) -> bool:
    """A public log, entry by entry, as the public sees it after the match: a spectator's
    events in its terminal's words (what it withholds is never known here, so it is never
    printed: a seat's own view needs the log in clear, `--unseal`)."""
    from projections.common import match_view, project_events
    from projections.contract import SPECTATOR
    from projections.seal import public_history

    checked, logged = public_history(_games(), list(entries))
    terminal = TERMINALS.get(host.rules.name)
    if checked.ok and checked.withheld == 0 and logged:
        # It withholds nothing: its one possible match is the match, printed as any log.
        replay = _Replay(
            host, terminal, logged[0].before, out, round_no=round_no, viewer=viewer, say_failure=say_failure
        )
        for item in logged:
            replay.show(item.entry, item.before, item.after, item.outcome)
        return replay.finish()
    if viewer is not None and viewer.seat is not None:
        print(
            "this public log withholds what the rules keep secret: a seat's view needs the "
            "log in clear (--unseal with the match's audit key)",
            file=out,
        )
        return False
    print("public log: what the rules keep secret is withheld (sealed)", file=out)
    shown_round: int | None = None
    seen_round = round_no is None
    updates = 0
    for item in logged:
        before, after = item.before, item.after
        round_ = host.rules.round_of(before.game_state) if before.started else None
        wanted = round_no is None or round_ == round_no
        seen_round = seen_round or wanted
        shown = project_events(host.views, after, item.outcome, SPECTATOR)
        if viewer is not None:
            if not shown:
                continue
            updates += 1
        if not wanted:
            continue
        if round_ is not None and round_ != shown_round:
            print(f"--- round {round_} ---", file=out)
            shown_round = round_
        if viewer is not None:
            print(f"update {updates} +{(item.entry.ts - before.created) / 1000:.3f}s", file=out)
        else:
            print(_entry_line(item.entry, before, show_body=not shown), file=out)
        view = match_view(host.views, after, SPECTATOR)
        for line in event_lines(terminal, view, shown):
            print(f"    {clock_times(line, before.created)}", file=out)
    if not checked.ok:
        if say_failure:
            print(f"FAILED at {checked.failure}", file=out)
        return False
    if not seen_round:
        print(f"no round {round_no} in this log", file=out)
    final = logged[-1].after if logged else None
    if final is not None and final.result is not None:
        r = final.result
        winner = "draw" if r.winner is None else f"seat {r.winner} ({final.names[r.winner]})"
        print(f"result: {winner} after {r.rounds} rounds, {r.reason}" + _scores(r.scores), file=out)
    else:
        print("the log ends before the match does", file=out)
    return seen_round


def print_unsealed(
    clear: list[Any], key_hex: str, published: list[Any] | None = None, out: Any = None
) -> bool:
    """With the audit key: the clear log is the match's, it verifies as every log does,
    and the public log made from it is `published` (when given), so every commitment
    there opens to the value here. Says which check failed."""
    from projections.registry import hosted
    from projections.seal import check_unsealed

    out = out or sys.stdout
    try:
        key = bytes.fromhex(key_hex)
    except ValueError:
        print("unseal: FAILED: an audit key is 64 hex digits", file=out)
        return False
    if not clear or not isinstance(clear[0].body, dict):
        print("unseal: FAILED: the log is empty", file=out)
        return False
    host = hosted(str(clear[0].body.get("game")))
    checked = check_unsealed(host.rules, host.views, clear, key, published)
    if not checked.ok:
        print(f"unseal: FAILED: {checked.failure}", file=out)
        return False
    what = "and the published log is the one it makes (every seal opens)" if published is not None else (
        "and the public log it makes verifies"
    )
    print(f"unseal: ok: the audit key is this match's, {what}", file=out)
    return True


# --- receipts: the log a player was shown (server/keys.py) ------------------------------


def read_receipts(path: str) -> list[dict[str, Any]]:
    """The receipts and acknowledged digests of a file `write_receipts` wrote (one JSON
    object a line); ValueError naming the line that is not one."""
    found: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}, line {number}: not JSON: {exc}") from None
            if not isinstance(value, dict) or value.get("type") not in ("receipt", "ack"):
                raise ValueError(f"{path}, line {number}: not a receipt or an acknowledged digest")
            found.append(value)
    return found


def check_receipts(entries: Sequence[Any], receipts: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Hold a log against what the server told a player: each signed receipt (its
    signature, the match's commitment, the digest it vouches for at its entry) and each
    acknowledged command's digest. (what was checked, the problems found); a digest that
    differs names the entries that were rewritten after it was given: those after the
    last checkpoint that still matches, up to the first that does not. Receipts of other
    matches are skipped."""
    from server.keys import verify_receipt

    if not entries:
        return [], ["the log is empty"]
    body = entries[0].body if isinstance(entries[0].body, dict) else {}
    match, commitment = body.get("match"), body.get("commitment")
    digests = {e.seq: e.digest for e in entries}
    commands = {(e.seat, e.cid): e for e in entries if e.kind == "command"}
    last = entries[-1].seq
    problems: list[str] = []
    keys: set[str] = set()
    points: list[tuple[int, bool, str]] = []  # (entry, the log's digest matches, what said so)
    signed = acks = others = 0
    for r in receipts:
        if r.get("match") != match:
            others += 1
            continue
        if r.get("type") == "ack":
            acks += 1
            entry = commands.get((r.get("seat"), r.get("id")))
            what = f"the ack of command {r.get('id')!r} of seat {r.get('seat')}"
            if entry is None:
                problems.append(f"{what} vouched for an entry the log does not hold")
            else:
                points.append((entry.seq, entry.digest == r.get("digest"), what))
            continue
        signed += 1
        seq = r.get("seq")
        what = {
            "created": "the receipt of the creation", "started": "the receipt of the start",
            "ended": "the receipt of the end",
        }.get(
            str(r.get("what")), f"the receipt of round {r.get('round')}"
        )
        if not verify_receipt(r):
            problems.append(f"{what} (entry {seq}): its signature does not verify")
            continue
        keys.add(f"{r.get('key')} (public key {r.get('public_key')})")
        if r.get("commitment") != commitment:
            problems.append(f"{what}: the server signed commitment {r.get('commitment')}, the log has {commitment}")
        if not isinstance(seq, int) or seq > last:
            problems.append(f"{what} vouches for entry {seq}, but the log ends at entry {last}: entries were removed")
        else:
            points.append((seq, digests.get(seq) == r.get("digest"), what))
    points.sort(key=lambda p: p[0])
    bad = next((p for p in points if not p[1]), None)
    if bad is not None:
        good = [p for p in points if p[1] and p[0] < bad[0]]
        since = good[-1][0] + 1 if good else 1
        span = f"entry {bad[0]}" if since == bad[0] else f"entries {since} to {bad[0]}"
        problems.insert(
            0, f"{span}: rewritten after {bad[2]} was given (at entry {bad[0]} the server "
            f"vouched for another digest than the log's)",
        )
    checked = [f"{signed} signed receipts and {acks} acknowledged digests of match {match}"]
    if keys:
        checked.append("signed by key " + ", ".join(sorted(keys)) + ": compare it with the server's GET /key")
    if others:
        checked.append(f"{others} of other matches skipped")
    return checked, problems


def print_receipts(entries: Sequence[Any], receipts: Sequence[dict[str, Any]], out: Any = None) -> bool:
    """`replay --verify --receipts`: say what was held against the log; False if anything
    differs, or if no receipt of this match was given."""
    out = out or sys.stdout
    checked, problems = check_receipts(entries, receipts)
    for line in checked:
        print(f"receipts: {line}", file=out)
    if not problems and checked and checked[0].startswith("0 signed receipts and 0 "):
        problems = ["none of them is of this match"]
    if problems:
        for line in problems:
            print(f"receipts: FAILED: {line}", file=out)
        return False
    print("receipts: ok (the log is the one the server vouched for)", file=out)
    return True


def _scores(scores: Any) -> str:
    """The scores after a result's reason, when the game keeps any."""
    return f"; scores {list(scores)}" if scores else ""

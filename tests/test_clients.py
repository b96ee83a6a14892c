"""The clients without a server: bots against the real rules, the terminal front-end,
the command line's arguments, and replaying a hand-made log."""

from __future__ import annotations

import json
import random
import re
import socket
import sys
import types
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients import cli
from clients.bots import BOTS, Simulation, bot_factory, simulate
from clients.bots import five_card_trick as fct_bots
from clients.bots import lineup as default_lineup
from clients.client import decode_log, endpoints
from clients.terminal import TERMINALS
from domain import engine
from domain.games import five_card_trick as fct
from domain.games.five_card_trick import RoundResolved
from projections import registry
from projections.common import ENGINE_EVENT_NAMES, engine_event, match_view
from projections.contract import Viewer
from projections.registry import hosted

GAME = "five-card-trick"
VARIANTS = ("dm12", "gauntlet", "setnas-curse", "final")
LINEUPS = (("heuristic", "random"), ("random", "heuristic"), ("heuristic", "heuristic"), ("random", "random"))


def play(variant: str, lineup: tuple[str, str], game_no: int, **options: Any) -> Simulation:
    bots = [
        bot_factory(GAME, name)(random.Random(f"{variant}:{game_no}:{seat}"))
        for seat, name in enumerate(lineup)
    ]
    seed = bytes([game_no % 256]) * 32
    return simulate(GAME, bots, variant=variant, options=options, seed=seed)


# --- bots ------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("lineup", LINEUPS, ids="-".join)
def test_bots_never_send_what_is_rejected_or_disregarded(variant: str, lineup: tuple[str, str]) -> None:
    for game_no in range(4):
        sim = play(variant, lineup, game_no)
        assert sim.result is not None, "the match did not end"
        assert sim.rejections == [], sim.rejections[:3]
        assert sim.warnings == [], sim.warnings[:3]
        assert sim.commands >= 2 * sim.result.rounds  # every seat moved every round
        for outcome in sim.outcomes:
            for event in outcome.events:
                if isinstance(event, RoundResolved):
                    for seat in event.seats:
                        assert seat.submitted
                        assert all(p.status != "disregarded" for p in seat.plays), seat.plays


def test_bots_play_extensions_and_short_matches() -> None:
    for game_no in range(6):
        sim = play("dm12", ("random", "random"), game_no, rounds=1, extension=1, max_rounds=6)
        assert sim.result is not None and 1 <= sim.result.rounds <= 6
        assert not sim.rejections and not sim.warnings


def test_heuristic_beats_random_most_of_the_time() -> None:
    for variant in ("dm12", "final"):
        wins = 0
        for game_no in range(16):
            lineup = ("heuristic", "random") if game_no % 2 == 0 else ("random", "heuristic")
            sim = play(variant, lineup, game_no)
            winner = sim.result.winner
            wins += winner is not None and lineup[winner] == "heuristic"
        assert wins >= 13, f"{variant}: the heuristic bot won only {wins} of 16"


def test_heuristic_uses_its_items_in_final() -> None:
    used: set[tuple[int, str]] = set()
    for game_no in range(6):
        for lineup in (("heuristic", "random"), ("random", "heuristic")):
            sim = play("final", lineup, game_no)
            heuristic = lineup.index("heuristic")
            for entry in sim.entries:
                if entry.kind == "command" and entry.seat == heuristic:
                    body = entry.body
                    items = [body["item"]] if body["type"] == "use_item" else body["items"]
                    used.update((heuristic, item) for item in items)
    # Default holdings: seat 0 Overload; seat 1 Claim Priority and Limit Reset.
    assert {(0, "overload"), (1, "limit_reset"), (1, "claim_priority")} <= used


def test_bots_decide_from_the_view_only() -> None:
    """A bot's move depends on the view and its seeded rng, not on hidden state: the
    same view and seed give the same command."""
    sim = play("dm12", ("heuristic", "random"), 3)
    host = hosted(GAME)
    ms = engine.open_match(host.rules, sim.entries[0])
    views = []
    for entry in sim.entries[1:12]:
        ms, _ = engine.apply(ms, entry)
        views.append(match_view(host.views, ms, Viewer(seat=0)))
    for name in ("heuristic", "random"):
        for view in views:
            a = bot_factory(GAME, name)(random.Random(5)).act(json.loads(json.dumps(view)))
            b = bot_factory(GAME, name)(random.Random(5)).act(view)
            assert a == b


def test_bot_acts_once_a_round_and_retries_after_a_rejection() -> None:
    sim = play("dm12", ("random", "random"), 1)
    host = hosted(GAME)
    ms = engine.open_match(host.rules, sim.entries[0])
    for entry in sim.entries[1:4]:  # create, two joins: round 1 in play
        ms, _ = engine.apply(ms, entry)
    view = match_view(host.views, ms, Viewer(seat=1))
    bot = bot_factory(GAME, "heuristic")(random.Random(1))
    [command] = bot.act(view)
    assert command["type"] == "submit" and command["round"] == 1
    assert bot.act(view) == []
    bot.feedback(command, False, (), "busy")
    assert len(bot.act(view)) == 1
    assert bot_factory(GAME, "heuristic")(random.Random(1)).act({**view, "you": None}) == []


def test_registry_finds_bots_by_game() -> None:
    assert set(BOTS[GAME]) >= {"random", "heuristic"}
    assert GAME in TERMINALS
    with pytest.raises(KeyError, match="no bots for game"):
        bot_factory("chess", "random")
    with pytest.raises(KeyError, match="no bot 'genius'"):
        bot_factory(GAME, "genius")


def test_a_games_line_up_is_its_own_and_cycles_over_the_seats() -> None:
    assert default_lineup(GAME, 2) == ["heuristic", "random"]
    assert default_lineup("memory-maze", 3) == ["explorer", "random", "explorer"]
    assert default_lineup("keys-to-success", 13)[-2:] == ["random", "heuristic"]
    with pytest.raises(KeyError, match="no bots for game 'chess'"):
        default_lineup("chess", 2)


def test_a_registered_games_bots_are_found_by_its_module_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.GAMES, "tiny-game", hosted(GAME))
    assert "tiny-game" not in BOTS  # registered, but no clients.bots.tiny_game yet
    bots = types.ModuleType("clients.bots.tiny_game")
    bots.BOTS = {"only": fct_bots.RandomBot}  # type: ignore[attr-defined]
    bots.LINEUP = ("only", "missing")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "clients.bots.tiny_game", bots)
    assert "tiny-game" in BOTS and BOTS["tiny-game"]["only"] is fct_bots.RandomBot
    with pytest.raises(ValueError, match="LINEUP names 'missing'"):
        default_lineup("tiny-game", 2)
    bots.LINEUP = ("only",)  # type: ignore[attr-defined]
    assert default_lineup("tiny-game", 3) == ["only"] * 3


def test_legal_sets_agree_with_the_rules() -> None:
    seat = fct.SeatState(history=(("score", "grow"), ("score", "claim")))
    legal = fct_bots.legal_sets(seat, "dm12")
    assert ("score", "steal") not in legal  # Score a third round in a row
    assert ("score", "claim") not in legal  # the same pair again
    assert ("grow", "claim") in legal
    final = fct.SeatState(history=(("claim", "claim"),))
    assert all("claim" not in cards for cards in fct_bots.legal_sets(final, "final"))
    assert ("claim", "claim") in fct_bots.legal_sets(final, "final", 2, ("limit_reset",))
    assert all(len(c) == 3 and len(set(c)) > 1 for c in fct_bots.legal_sets(seat, "final", 3, ("overload",)))


_cards = st.lists(st.sampled_from(fct.ACTIONS), max_size=3).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    st.builds(
        fct.SeatState,
        chips=st.integers(0, 40),
        history=st.lists(_cards, max_size=2).map(tuple),
        reset_last=st.booleans(),
        blocked=st.lists(st.sampled_from(fct.ACTIONS), max_size=2).map(tuple),
    ),
    st.sampled_from(["dm12", "final", "setnas-curse", "gauntlet"]),
    st.sampled_from([(2, ()), (3, ("overload",)), (2, ("limit_reset",))]),
)
def test_legal_sets_kept_are_those_worked_out_afresh(
    seat: fct.SeatState, variant: str, wanted: tuple[int, tuple[str, ...]]
) -> None:
    """legal_sets keeps its answers by what the rules read of a seat: every seat gets
    the sets the rules leave it, as if asked for the first time."""
    size, items = wanted
    afresh = [c for c in fct_bots.card_sets(variant, size) if not fct_bots.disregarded(seat, variant, c, items)]
    assert fct_bots.legal_sets(seat, variant, size, items) == afresh


# --- the terminal front-end ------------------------------------------------------------


def _started_view(variant: str = "dm12", seat: int = 0, **options: Any) -> dict[str, Any]:
    host = hosted(GAME)
    first = engine.create_entry(host.rules, match_id="m", variant=variant, options=options, seed=b"\1" * 32, ts=1000)
    ms = engine.open_match(host.rules, first)
    for s in range(2):
        _, ms, _ = engine.propose(ms, kind="join", seat=None, cid=None, body={"name": f"P{s}"}, ts=1000)
    return match_view(host.views, ms, Viewer(seat=seat))


def test_terminal_parses_commands() -> None:
    term = TERMINALS[GAME]
    view = _started_view()
    assert term.parse("score grow", view) == fct_bots.submit(1, ["score", "grow"])
    assert term.parse("claim block:steal", view) == fct_bots.submit(1, ["claim", "block"], "steal")
    assert term.parse("sc bl=cl", view) == fct_bots.submit(1, ["score", "block"], "claim")
    assert term.parse("submit Score, Claim", view) == fct_bots.submit(1, ["score", "claim"])
    assert term.parse("score claim +overload", view) == fct_bots.submit(1, ["score", "claim"], None, ["overload"])
    assert term.parse("claim claim", view) == fct_bots.submit(1, ["claim", "claim"])
    assert term.parse("none", view) == fct_bots.submit(1, [])
    assert term.parse("item claim_priority", view) == fct_bots.use_item(1, "claim_priority")
    assert term.parse("use Claim-Priority", view) == fct_bots.use_item(1, "claim_priority")
    for bad, message in [
        ("s grow", "could be Score, Steal"),
        ("dance", "not an action"),
        ("block", "name what Block blocks"),
        ("score:grow", "only Block names a target"),
        ("item sword", "not an item"),
        ("", "type actions"),
    ]:
        with pytest.raises(ValueError, match=message):
            term.parse(bad, view)
    with pytest.raises(ValueError, match="not started"):
        term.parse("score grow", {**view, "started": False})
    # Setna's Curse shows Raise for Grow; both spellings work.
    curse = _started_view("setnas-curse")
    assert term.parse("raise claim", curse)["actions"] == ["grow", "claim"]
    assert term.parse("grow claim", curse)["actions"] == ["grow", "claim"]


def test_terminal_renders_a_whole_match() -> None:
    term = TERMINALS[GAME]
    sim = play("final", ("heuristic", "random"), 2)
    host = hosted(GAME)
    ms = engine.open_match(host.rules, sim.entries[0])
    text = ""
    for entry in sim.entries[1:]:
        ms, outcome = engine.apply(ms, entry)
        for seat in (0, 1, None):
            view = match_view(host.views, ms, Viewer(seat=seat))
            text = term.render(view, 12.4)
            events = [host.views.event(ms, e, Viewer(seat=seat)) for e in outcome.events]
            term.render_events(view, [e for e in events if e is not None])
    assert "MATCH OVER" in text
    mid = _started_view()
    shown = term.render(mid, 59.6)
    assert "round 1 of 25" in shown and "60 s left" in shown and "you P0" in shown


# --- command-line arguments ------------------------------------------------------------


def test_parser_spellings() -> None:
    p = cli.build_parser()
    a = p.parse_args(["serve"])
    assert (a.host, a.port, a.redis_url, a.allow_origin) == ("127.0.0.1", 8000, None, [])
    a = p.parse_args(["serve", "--host", "0.0.0.0", "--port", "9000", "--redis-url", "redis://r:6379/0",
                      "--allow-origin", "https://a.example", "--allow-origin", "https://b.example"])
    assert (a.host, a.port, a.redis_url) == ("0.0.0.0", 9000, "redis://r:6379/0")
    assert a.allow_origin == ["https://a.example", "https://b.example"]

    a = p.parse_args(["play", "--server", "http://h:1"])
    assert (a.server, a.game, a.variant, a.match, a.seat, a.name, a.spectate) == (
        "http://h:1", GAME, None, None, None, None, False)
    a = p.parse_args(["play", "--server", "http://h:1", "--game", GAME, "--variant", "final", "--match", "m1",
                      "--seat", "1", "--name", "Bob", "--spectate", "--option", "clock_scale=0.5"])
    assert (a.variant, a.match, a.seat, a.name, a.spectate, a.option) == (
        "final", "m1", 1, "Bob", True, [("clock_scale", 0.5)])

    a = p.parse_args(["bots", GAME])
    assert (a.game, a.variant, a.matches, a.server, a.clock_scale, a.bot, a.concurrency, a.seed) == (
        GAME, None, 1, None, None, [], 4, None)
    a = p.parse_args(["bots", GAME, "--variant", "final", "--matches", "5", "--server", "http://h:2",
                      "--clock-scale", "0.01", "--bot", "random", "--bot", "heuristic",
                      "--concurrency", "3", "--seed", "42"])
    assert (a.variant, a.matches, a.server, a.clock_scale, a.bot, a.concurrency, a.seed) == (
        "final", 5, "http://h:2", 0.01, ["random", "heuristic"], 3, "42")

    a = p.parse_args(["replay", "abc"])
    assert (a.source, a.server, a.verify) == ("abc", "http://127.0.0.1:8000", False)
    a = p.parse_args(["replay", "x.jsonl", "--server", "http://h:3", "--verify"])
    assert (a.source, a.server, a.verify) == ("x.jsonl", "http://h:3", True)

    with pytest.raises(SystemExit):
        p.parse_args(["bots"])
    with pytest.raises(SystemExit):
        p.parse_args(["play", "--option", "novalue"])


def test_serve_passes_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    import server.main

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(server.main, "serve", lambda **kw: calls.append(kw))
    monkeypatch.setenv("REDIS_URL", "redis://from-env:6379/0")
    assert cli.main(["serve", "--port", "8123", "--allow-origin", "https://x.example"]) == 0
    assert calls[-1] == {
        "host": "127.0.0.1", "port": 8123, "redis_url": "redis://from-env:6379/0",
        "allowed_origins": ["https://x.example"], "workers": 1,
    }
    assert cli.main(["serve", "--workers", "3"]) == 0
    assert calls[-1]["workers"] == 3
    assert cli.main(["serve", "--redis-url", "redis://flag:1/0"]) == 0
    assert calls[-1]["redis_url"] == "redis://flag:1/0" and calls[-1]["allowed_origins"] is None
    monkeypatch.delenv("REDIS_URL")
    assert cli.main(["serve"]) == 0
    assert calls[-1]["redis_url"] is None


def test_bots_refuses_unknown_games_and_bots(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bots", "chess"]) == 2
    assert "no bots for 'chess'" in capsys.readouterr().err
    assert cli.main(["bots", GAME, "--bot", "genius"]) == 2
    assert "no bot 'genius'" in capsys.readouterr().err


def test_endpoints() -> None:
    assert endpoints("http://h:1") == ("http://h:1", "ws://h:1/ws")
    assert endpoints("https://h/base/") == ("https://h/base", "wss://h/base/ws")
    assert endpoints("ws://h:1/ws") == ("http://h:1", "ws://h:1/ws")
    assert endpoints("h:2") == ("http://h:2", "ws://h:2/ws")


# --- replay ----------------------------------------------------------------------------


def hand_made_log() -> list[engine.Entry]:
    """Two rounds, scripted: Black scores and grows, White claims the pot and blocks
    Steal; then White's stale command is rejected, Black's Steal is blocked, White
    claims again and wins 4 to 2."""
    host = hosted(GAME)
    first = engine.create_entry(
        host.rules, match_id="hand", variant="dm12", options={"rounds": 2, "max_rounds": 2},
        seed=bytes(range(32)), ts=10_000,
    )
    entries = [first]
    ms = engine.open_match(host.rules, first)
    steps: list[tuple[str, int | None, Any]] = [
        ("join", None, {"name": "Black"}),
        ("join", None, {"name": "White"}),
        ("command", 0, fct_bots.submit(1, ["score", "grow"])),
        ("command", 1, fct_bots.submit(1, ["claim", "block"], "steal")),
        ("command", 1, fct_bots.submit(1, ["score", "grow"])),  # stale: rejected
        ("command", 0, fct_bots.submit(2, ["score", "steal"])),
        ("command", 1, fct_bots.submit(2, ["grow", "claim"])),
    ]
    ts = 10_000
    for n, (kind, seat, body) in enumerate(steps):
        ts += 500
        entry, ms, _ = engine.propose(ms, kind=kind, seat=seat, cid=f"c{n}", body=body, ts=ts)  # type: ignore[arg-type]
        entries.append(entry)
    assert ms.ended and ms.result is not None and ms.result.winner == 1
    return entries


def write_log(path: Path, entries: list[engine.Entry]) -> None:
    path.write_bytes(b"".join(msgspec.json.encode(e) + b"\n" for e in entries))


def test_replay_prints_round_by_round_and_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = hand_made_log()
    log = tmp_path / "hand.jsonl"
    write_log(log, entries)
    assert [e.digest for e in decode_log(log.read_bytes())] == [e.digest for e in entries]
    assert cli.main(["replay", str(log), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "match hand: five-card-trick / dm12" in out
    assert out.index("--- round 1 ---") < out.index("--- round 2 ---")
    assert "White takes seat 1" in out
    assert "rejected (wrong_round)" in out
    assert "Steal [blocked]" in out
    assert "result: seat 1 (White) after 2 rounds" in out
    commitment = entries[0].body["commitment"]
    assert out.strip().splitlines()[-1] == f"verify: ok ({len(entries)} entries, commitment {commitment})"

    assert cli.main(["replay", str(log)]) == 0
    assert "verify:" not in capsys.readouterr().out


def test_replay_names_the_tampered_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = hand_made_log()
    seq = 7  # Black's round-2 submission
    assert entries[seq - 1].kind == "command"
    entries[seq - 1] = msgspec.structs.replace(entries[seq - 1], body=fct_bots.submit(2, ["score", "claim"]))
    log = tmp_path / "tampered.jsonl"
    write_log(log, entries)

    assert cli.main(["replay", str(log), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "--- round 1 ---" in out  # what folded is printed
    assert re.search(rf"^verify: FAILED at entry {seq} \(round 2\): .*digest", out, re.M), out

    assert cli.main(["replay", str(log)]) == 1
    out = capsys.readouterr().out
    assert f"FAILED at entry {seq} (round 2)" in out
    assert "#6 " in out and f"#{seq} " not in out


def test_replay_of_an_unreachable_server(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert cli.main(["replay", "some-match", "--server", f"http://127.0.0.1:{port}"]) == 1
    assert "cannot load some-match" in capsys.readouterr().err


def test_replay_of_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1}\nnot json\n')
    assert cli.main(["replay", str(bad)]) == 1
    assert "line 1" in capsys.readouterr().err


# --- the client library against a scripted socket ----------------------------------------


async def test_connection_resumes_after_4008_and_resends_pending_commands() -> None:
    """A server that drops a slow reader (4008) mid-command: the client says hello again
    with since=<last seq seen> and resends the unanswered command under the same id."""
    from websockets.asyncio.server import ServerConnection, serve

    from clients.client import MatchConnection

    hellos: list[dict[str, Any]] = []
    commands: list[dict[str, Any]] = []

    def update(seq: int) -> str:
        return json.dumps({"type": "update", "seq": seq, "ts": 0, "events": [], "view": {"n": seq}})

    async def handler(ws: ServerConnection) -> None:
        hello = json.loads(await ws.recv())
        hellos.append(hello)
        await ws.send(json.dumps({"type": "welcome", "match": "m", "game": GAME, "variant": "dm12",
                                  "role": "player", "seat": 0, "seq": 2}))
        if len(hellos) == 1:
            await ws.send(update(1))
            await ws.send(update(2))
            commands.append(json.loads(await ws.recv()))
            await ws.close(4008, "too slow: resume from your last seq")
            return
        commands.append(json.loads(await ws.recv()))
        await ws.send(update(3))
        await ws.send(json.dumps({"type": "ack", "id": commands[-1]["id"], "seq": 3, "warnings": [],
                                  "duplicate": False}))
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with MatchConnection(f"http://127.0.0.1:{port}", "m", token="t") as conn:
            await conn.wait_view(lambda v: v["n"] == 2, timeout=5)
            result = await conn.send_command({"type": "submit"}, timeout=5)
            assert result.accepted and result.seq == 3
            assert conn.resumes == 1 and conn.last_seq == 3 and conn.view == {"n": 3}
            seen = []
            while conn.backlog():
                message = await conn.recv()
                assert message is not None
                seen.append((message["type"], message.get("seq")))
    assert [h["since"] for h in hellos] == [0, 2]
    assert hellos[0]["token"] == "t" and hellos[0]["match"] == "m"
    assert commands[0] == commands[1] and commands[0]["type"] == "command"
    assert seen == [("welcome", 2), ("update", 1), ("update", 2), ("welcome", 2), ("update", 3), ("ack", 3)]


def test_replay_one_round_as_each_viewer_saw_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An auditor's view of a disputed round: the whole of it, and what each side and a
    spectator were shown, numbered as their own streams were."""
    log = tmp_path / "hand.jsonl"
    write_log(log, hand_made_log())

    assert cli.main(["replay", str(log), "--round", "2", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "--- round 2 ---" in out and "--- round 1 ---" not in out
    assert "White takes seat 1" not in out and "Steal [blocked]" in out
    assert "verify: ok" in out

    # Black (seat 0) in round 2: its stream so far is the two joins (the second starts
    # the match) and round 1's two updates (its submission; White's with the results),
    # not White's rejected command...
    assert cli.main(["replay", str(log), "--round", "2", "--as", "0"]) == 0
    black = capsys.readouterr().out
    assert "as seat 0 saw it" in black
    numbers = [int(n) for n in re.findall(r"^update (\d+) ", black, re.M)]
    assert numbers == [5, 6], black
    first = black[black.index("update 5") : black.index("update 6")]
    assert "you submitted for round 2" in first
    assert "Claim" not in first, "White's hand is not shown before the results"
    assert re.search(r"White: .*Claim", black[black.index("update 6") :]), black

    # ...and White's (seat 1) whole stream is numbered 1, 2, 3, ... as it got it
    assert cli.main(["replay", str(log), "--as", "1"]) == 0
    white = capsys.readouterr().out
    numbers = [int(n) for n in re.findall(r"^update (\d+) ", white, re.M)]
    assert numbers == list(range(1, len(numbers) + 1))
    assert "Black takes seat 0" in white

    assert cli.main(["replay", str(log), "--round", "1", "--as", "spectator"]) == 0
    watcher = capsys.readouterr().out
    assert "as a spectator saw it" in watcher
    assert "Score" not in watcher.split("round 1 results")[0], "nobody's hand before the results"

    assert cli.main(["replay", str(log), "--round", "9"]) == 1
    assert "no round 9 in this log" in capsys.readouterr().out
    assert cli.main(["replay", str(log), "--as", "2"]) == 1
    assert "no seat 2: this match has seats 0 to 1" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["replay", str(log), "--as", "white"])


def test_the_engine_events_a_client_tells_apart_are_the_engines() -> None:
    sim = play("dm12", ("heuristic", "random"), 1)
    sent = {
        engine_event(e)["type"]  # type: ignore[index]
        for outcome in sim.outcomes
        for e in outcome.events
        if isinstance(e, engine.ENGINE_EVENTS)
    }
    assert sent == ENGINE_EVENT_NAMES == {"seat_taken", "match_started", "match_ended", "revealed"}


def test_each_terminal_says_what_the_clock_waits_for() -> None:
    fct, mm, kts = TERMINALS["five-card-trick"], TERMINALS["memory-maze"], TERMINALS["keys-to-success"]
    seats = [{"submitted": True}, {"submitted": False}]
    base = {"started": True, "ended": False}
    assert fct.awaiting({**base, "you": 1, "game_state": {"seats": seats}}) == "you have not submitted"
    assert fct.awaiting({**base, "you": 0, "game_state": {"seats": seats}}) is None
    assert fct.awaiting({**base, "ended": True, "you": 1, "game_state": {"seats": seats}}) is None
    assert mm.awaiting({**base, "you": 1, "game_state": {"turns": True, "to_move": 1}}) == "it is your move"
    assert mm.awaiting({**base, "you": 0, "game_state": {"turns": True, "to_move": 1}}) is None
    assert mm.awaiting({**base, "you": 0, "game_state": {"turns": False, "to_move": None}}) is None
    play = {"phase": "play", "me": {"can_submit": True, "submitted": False}}
    assert kts.awaiting({**base, "you": 3, "game_state": play}) == "you have not submitted"
    escaped = {"phase": "play", "me": {"can_submit": False, "submitted": False}}
    assert kts.awaiting({**base, "you": 3, "game_state": escaped}) is None
    vote = {"phase": "vote", "me": {"vote": None}, "results": {"winners": [3], "losers": [4]}}
    assert kts.awaiting({**base, "you": 3, "game_state": vote}) == "you have not voted"
    assert kts.awaiting({**base, "you": 4, "game_state": vote}) is None
    voted = {**vote, "me": {"vote": 4}}
    assert kts.awaiting({**base, "you": 3, "game_state": voted}) is None

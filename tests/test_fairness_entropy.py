"""Player entropy (log version 2, domain/engine.py; docs/fairness.md): the commitment
is published before any entropy exists, every draw comes from a key derived from the
committed seed and every seat's entropy, and `verify` draws again from the revealed seed
and the recorded entropy. Version-1 logs (the golden files) still fold as they did."""

from __future__ import annotations

import io

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.client import DaedalusHttp
from clients.replay import print_verify
from domain import engine
from domain.driver import MatchDriver
from domain.games import keys_to_success as kts
from domain.games import memory_maze as mm
from domain.games.memory_maze.maze import render
from projections.common import match_view
from projections.contract import Viewer
from projections.registry import hosted, rules_by_name
from server.config import Settings
from server.main import EmbeddedServer
from tests import toygame

toygame.install()

SEED = bytes(range(32))


def maze_match(entropy: tuple[str | None, str | None], seed: bytes = SEED, **options: object) -> MatchDriver:
    d = MatchDriver(mm, variant="black-garnet", options=options, seed=seed)
    for seat, e in enumerate(entropy):
        outcome = d.join(f"P{seat}", seat, entropy=e)
        assert outcome.rejection is None, outcome.rejection
    return d


def test_the_commitment_is_published_before_any_entropy_and_binds_the_seed_alone() -> None:
    d = MatchDriver(mm, variant="black-garnet", seed=SEED)
    body = d.entries[0].body
    assert body["log_version"] == engine.LOG_VERSION >= 2
    assert body["setup"] is None  # nothing drawn yet
    assert body["commitment"] == engine.commitment_of(SEED.hex(), None)
    assert d.ms.setup is None and not d.ms.started
    # Whatever entropy comes later, the create entry (and so the commitment) is the same.
    later = [maze_match((e, "x")) for e in ("a", "b")]
    assert all(m.entries[0] == d.entries[0] for m in later)
    other = MatchDriver(mm, variant="black-garnet", seed=bytes(32))
    assert other.entries[0].body["commitment"] != body["commitment"]


def test_the_setup_is_drawn_when_the_last_seat_is_taken_from_the_seed_and_every_entropy() -> None:
    d = MatchDriver(mm, variant="black-garnet", seed=SEED)
    d.join("Ann", 0, entropy="ann's own")
    assert d.ms.setup is None and d.ms.entropy == ("ann's own", None)
    d.join("Bob", 1, entropy="bob's own")
    key = engine.draw_key(SEED.hex(), ["ann's own", "bob's own"])
    drawn = mm.make_setup(d.ms.options, engine.Rng(key, "setup"))
    assert d.ms.started and d.ms.setup == drawn and drawn["source"] == "seed"
    assert d.ms.game_state.maze == mm.maze_of(drawn, "black-garnet")
    assert d.entries[2].body == {"name": "Bob", "seat": 1, "entropy": "bob's own"}  # public in the log


def test_before_the_start_the_state_does_not_depend_on_the_seed() -> None:
    views = hosted("memory-maze").views
    seen = []
    for seed in (SEED, bytes(32)):
        d = MatchDriver(mm, variant="black-garnet", seed=seed, match_id="m")
        d.join("Ann", 0, entropy="e")
        seen.append((d.ms.game_state, [match_view(views, d.ms, Viewer(seat=s)) for s in (0, None)]))
    (state_a, views_a), (state_b, views_b) = seen
    assert state_a == state_b
    assert [{**v, "commitment": None} for v in views_a] == [{**v, "commitment": None} for v in views_b]


def test_grinding_any_seats_entropy_changes_the_setup_and_never_the_commitment() -> None:
    """Once the commitment is out the server cannot choose the setup: each seat's entropy
    alone, with everything else fixed, moves the maze (every value here a different one),
    while the commitment, published before, stays what it was."""
    commitment = maze_match((None, None)).ms.commitment
    for seat in (0, 1):
        mazes = set()
        for n in range(16):
            entropy = ("fixed", f"try {n}") if seat else (f"try {n}", "fixed")
            d = maze_match(entropy)
            assert d.ms.commitment == commitment
            mazes.add(tuple(d.ms.setup["drawing"]))
        assert len(mazes) == 16, f"seat {seat}: some entropies drew the same maze"


@settings(max_examples=25, deadline=None)
@given(
    st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=40),
    st.text(st.characters(min_codepoint=0xC0, max_codepoint=0x17F), min_size=1, max_size=40),
    st.sampled_from([0, 1]),
)
def test_any_change_to_one_seats_entropy_draws_another_maze(a: str, b: str, seat: int) -> None:
    base = maze_match((a, b))
    changed = (a + "!", b) if seat == 0 else (a, b + "!")
    other = maze_match(changed)
    assert other.ms.commitment == base.ms.commitment
    assert other.ms.setup != base.ms.setup


def test_a_hosts_maze_is_committed_at_creation_marked_given_and_not_moved_by_entropy() -> None:
    drawing = "\n".join(render(maze_match(("x", "y")).ms.game_state.maze))
    matches = [maze_match(e, maze=drawing) for e in (("a", "b"), ("c", None))]
    first = matches[0].entries[0].body
    assert first["setup"]["source"] == "host" and first["setup"]["drawing"] == drawing.split("\n")
    assert first["commitment"] == engine.commitment_of(SEED.hex(), first["setup"])
    assert matches[0].ms.setup == matches[1].ms.setup == first["setup"]
    assert all(m.ms.setup_given for m in matches)
    for m in matches:  # played to the end: verify names it as given
        m.rewind(len(m.entries))
    v = engine.verify(rules_by_name(), matches[0].entries)
    assert v.ok and v.setup == "host"


def test_draws_during_play_come_from_the_key() -> None:
    d = MatchDriver(kts, variant="gatekeeping", options={"seats": 4}, seed=SEED)
    for seat in range(4):
        d.join(f"P{seat}", seat, entropy=None if seat == 2 else f"e{seat}")
    assert d.ms.game_state.seed == engine.draw_key(SEED.hex(), ["e0", "e1", None, "e3"])
    assert d.ms.game_state.seed != SEED


def test_verify_draws_again_from_the_revealed_seed_and_the_recorded_entropy() -> None:
    from clients.bots import BOTS

    d = MatchDriver(mm, variant="black-garnet", seed=SEED)
    d.join("Ann", 0, entropy="ann")
    d.join("Bob", 1)
    from clients.driver import MatchDriver as BotDriver

    class V2(BotDriver):
        log_version = 2  # (its digests are the plain chain, made again below)

    # The same match played by bots to its end (the clients' driver adds them).
    b = V2("memory-maze", variant="black-garnet", seed=SEED)
    b.join("Ann", 0, entropy="ann")
    b.join("Bob", 1)
    assert b.ms.setup == d.ms.setup
    import random

    b.play_bots([BOTS["memory-maze"]["heuristic"](random.Random(s)) for s in (0, 1)])
    v = engine.verify(rules_by_name(), b.entries)
    assert v.ok and v.setup == "seed" and v.log_version >= 2 and (v.entropy_given, v.seats) == (1, 2)
    out = io.StringIO()
    assert print_verify(b.entries, out)
    assert "entropy: 1 of 2 seats gave their own" in out.getvalue()
    # A log whose recorded entropy was changed afterwards (chain digests made again) does
    # not verify: the setup it draws is not the one the match was played on.
    join = b.entries[1]
    body = {**join.body, "entropy": "someone else's"}
    forged = [b.entries[0]]
    for entry in b.entries[1:]:
        entry = msgspec.structs.replace(entry, body=body) if entry.seq == join.seq else entry
        forged.append(msgspec.structs.replace(entry, digest=engine.entry_digest(forged[-1].digest, entry)))
    bad = engine.verify(rules_by_name(), forged)
    assert not bad.ok and "outcome" in (bad.failure or "")


@pytest.mark.parametrize(
    ("entropy", "ok"),
    [("a", True), ("x" * 128, True), ("x" * 129, False), ("", False), ("tab\there", False), (7, False)],
)
def test_entropy_is_1_to_128_printable_characters(entropy: object, ok: bool) -> None:
    d = MatchDriver(toygame, seed=SEED)  # type: ignore[arg-type]
    outcome = d.propose("join", None, {"name": "Ann", "entropy": entropy})
    assert (outcome.rejection is None) == ok
    if not ok:
        assert outcome.rejection is not None and outcome.rejection.code == "bad_entropy"


def test_a_version_1_log_ignores_entropy_and_folds_as_before() -> None:
    class Old(MatchDriver):
        log_version = 1

    d = Old(mm, variant="black-garnet", seed=SEED)
    assert "log_version" not in d.entries[0].body
    assert d.entries[0].body["setup"] == mm.make_setup(d.ms.options, engine.Rng(SEED, "setup"))
    d.join("Ann", 0, entropy="ignored")
    d.join("Bob", 1, entropy="ignored too")
    assert d.ms.setup == d.entries[0].body["setup"] and d.ms.entropy == ()
    v = engine.verify(rules_by_name(), d.entries)
    assert v.ok and v.setup == "seed" and v.log_version == 1


async def test_a_seat_claim_carries_entropy_the_client_library_makes_its_own(tmp_path: object) -> None:
    settings_ = Settings(key_file=f"{tmp_path}/key.pem")
    async with EmbeddedServer(settings_) as srv:
        async with DaedalusHttp(srv.url) as http:
            match = (await http.create_match("toy"))["match"]
            await http.claim_seat(match, "Ann", entropy="my lucky number 7")
            await http.claim_seat(match, "Bob")  # the library's own: 64 random hex digits
        async with httpx.AsyncClient(base_url=srv.url) as raw:
            other = (await raw.post("/matches", json={"game": "toy"})).json()["match"]
            bad = await raw.post(f"/matches/{other}/seats", json={"name": "Cy", "entropy": "x" * 129})
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_entropy"
            typo = await raw.post(f"/matches/{other}/seats", json={"name": "Cy", "entorpy": "x"})
            assert typo.status_code == 400 and "entorpy" in typo.json()["error"]["message"]
        runner = await srv.app.state.hub.runner(match)
        ms = runner.current
        assert ms.started and ms.entropy[0] == "my lucky number 7"
        assert isinstance(ms.entropy[1], str) and len(ms.entropy[1]) == 64
        int(ms.entropy[1], 16)


def test_the_draw_key_is_the_documented_hmac() -> None:
    """docs/fairness.md gives the key as HMAC-SHA256 keyed by the seed over the prefix and
    the JSON list of entropies (UTF-8, no spaces): pinned here byte for byte, as a
    change would move every setup ever drawn from it."""
    import hashlib
    import hmac

    message = b'daedalus-draw-key-v2\n["ann\'s own",null,"' + "é".encode() + b'\\"x"]'  # UTF-8
    expected = hmac.new(SEED, message, hashlib.sha256).digest()
    assert engine.draw_key(SEED.hex(), ["ann's own", None, 'é"x']) == expected

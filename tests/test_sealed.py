"""What stays secret after a match: sealed in every after-match view and the public log.

Five-Card Trick keeps a Block's target that did not resolve and a replaced submission
secret for good (RULINGS.md, "After a match"). In a match of log version 3 or 4 those reach
only their owner, after the match too; the public log shows them as salted commitments
and still verifies; the audit key opens them (projections/seal.py, docs/fairness.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain import seal as sealing
from domain.canonical import to_builtins
from domain.driver import MatchDriver, driven_audit_key
from domain.engine import MatchState, Outcome
from domain.games import five_card_trick as fct
from projections import seal
from projections.common import match_view
from projections.contract import SPECTATOR, Viewer, Withheld
from projections.registry import GAMES, rules_by_name
from server.config import Settings
from server.main import EmbeddedServer
from server.streams import Streams
from tests.conformance.leaks import Played, play, twins_of
from tests.wsutil import Raw

FCT = GAMES["five-card-trick"]
GAMES_FOR = {name: (h.rules, h.views) for name, h in GAMES.items()}
ROOT = Path(__file__).resolve().parent.parent
SEED = bytes(range(32))


VERSIONS = [3, 4]
"""The log versions that seal (a test of the public log runs under both)."""


def fct_match(variant: str = "dm12", version: int = engine.LOG_VERSION, **options: Any) -> MatchDriver:
    class Driver(MatchDriver):
        log_version = version

    d = Driver(fct, variant=variant, options={"rounds": 2, "max_rounds": 2, **options}, seed=SEED)
    d.seat_all()
    return d


def submit(d: MatchDriver, seat: int, actions: list[str], block: str | None = None) -> None:
    body: dict[str, Any] = {"type": "submit", "round": d.ms.game_state.round, "actions": actions}
    if block is not None:
        body["block"] = block
    out = d.propose("command", seat, body)
    assert out.rejection is None, out.rejection


def finish(d: MatchDriver) -> None:
    while not d.ms.ended:
        d.advance()


def last_round_blocked_match(version: int = engine.LOG_VERSION) -> MatchDriver:
    """Two rounds; in the last one both play Block (they collide: both canceled), seat 0
    naming Claim and seat 1 Grow; seat 0 replaced a submission in round 1."""
    d = fct_match(version=version, early_close=False)
    submit(d, 0, ["score", "steal"])
    submit(d, 0, ["score", "grow"])
    submit(d, 1, ["grow"])
    d.advance()
    submit(d, 0, ["score", "block"], block="claim")
    submit(d, 1, ["block"], block="grow")
    finish(d)
    return d


def public_of(d: MatchDriver) -> list[seal.PublicEntry]:
    return seal.public_log(fct, FCT.views, d.entries)


def blocks(view: dict[str, Any]) -> list[Any]:
    return [s["block"] for s in view["game_state"]["last_round"]["seats"]]


# --- the views ---------------------------------------------------------------------------


def test_after_the_match_a_canceled_block_is_seen_by_its_owner_alone() -> None:
    d = last_round_blocked_match()
    plays = d.ms.game_state.last.seats
    assert [p.status for s in plays for p in s.plays if p.action == "block"] == ["canceled", "canceled"]
    assert blocks(match_view(FCT.views, d.ms, SPECTATOR)) == [None, None]
    assert blocks(match_view(FCT.views, d.ms, Viewer(seat=0))) == ["claim", None]
    assert blocks(match_view(FCT.views, d.ms, Viewer(seat=1))) == [None, "grow"]


def test_a_match_before_version_3_still_reveals_everything_at_its_end() -> None:
    class Version2(MatchDriver):
        log_version = 2

    d = Version2(fct, options={"rounds": 1, "max_rounds": 1}, seed=SEED)
    d.seat_all()
    submit(d, 0, ["block"], block="claim")
    submit(d, 1, ["block"], block="grow")
    finish(d)
    assert blocks(match_view(FCT.views, d.ms, SPECTATOR)) == ["claim", "grow"]


# --- the public log --------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_the_public_log_withholds_what_the_rules_keep_and_verifies(version: int) -> None:
    d = last_round_blocked_match(version)
    assert d.entries[0].body["log_version"] == version
    public = public_of(d)
    text = b"".join(msgspec.json.encode(e) for e in public)
    assert b'"block":"claim"' not in text and b'"block":"grow"' not in text
    assert b'"steal"' not in text, "the replaced submission"
    assert d.entries[0].body["audit"] not in text.decode()
    by_seq = {e.seq: e for e in public}
    replaced = by_seq[4]
    assert sealing.is_stand_in(replaced.body) and replaced.open == {"salts": {}}
    kept = by_seq[5]
    assert kept.body["actions"] == ["score", "grow"] and set(kept.open) == {"key"}
    final0 = by_seq[8]
    assert final0.body["actions"] == ["score", "block"] and sealing.is_stand_in(final0.body["block"])
    checked = seal.verify_public(GAMES_FOR, public)
    assert checked.ok, checked.failure
    assert checked.withheld == 4 and checked.setup == "seed"


@pytest.mark.parametrize("version", VERSIONS)
def test_with_the_audit_key_every_seal_opens_and_the_clear_log_verifies(version: int) -> None:
    d = last_round_blocked_match(version)
    public = public_of(d)
    key = driven_audit_key(SEED)
    assert engine.verify(rules_by_name(), d.entries).ok
    assert seal.check_unsealed(fct, FCT.views, d.entries, key, public).ok
    assert seal.audit_key_matches(public, key) and not seal.audit_key_matches(public, bytes(32))
    wrong = seal.check_unsealed(fct, FCT.views, d.entries, bytes(32), public)
    assert not wrong.ok and "not this match's" in (wrong.failure or "")
    # A published log whose seal does not open to the clear value is named.
    forged = list(public)
    body = dict(forged[7].body)
    body["block"] = sealing.stand_in("0" * 64)
    forged[7] = msgspec.structs.replace(forged[7], body=body)
    bad = seal.check_unsealed(fct, FCT.views, d.entries, key, forged)
    assert not bad.ok and "entry 8" in (bad.failure or "")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("opened_value", "entry 5 (round 1): the entry's digest does not match"),
        ("commitment", "entry 8 (round 2): the entry's digest does not match"),
        ("outcome", "entry 5 (round 1): the recorded outcome differs"),
    ],
)
@pytest.mark.parametrize("version", VERSIONS)
def test_an_edit_to_the_public_log_is_named(change: str, expected: str, version: int) -> None:
    public = public_of(last_round_blocked_match(version))
    if change == "opened_value":
        public[4] = msgspec.structs.replace(public[4], body={**public[4].body, "actions": ["score", "claim"]})
    elif change == "commitment":
        public[7] = msgspec.structs.replace(
            public[7], body={**public[7].body, "block": sealing.stand_in("1" * 64)}
        )
    else:
        public[4] = msgspec.structs.replace(public[4], out="2" * 64)
        # (the chained digest covers `out`: rechain from there so only the outcome is wrong)
        public = _rechain(public, 4)
    checked = seal.verify_public(GAMES_FOR, public)
    assert not checked.ok
    assert (checked.failure or "").startswith(expected), checked.failure


def _rechain(public: list[seal.PublicEntry], start: int) -> list[seal.PublicEntry]:
    out = public[:start]
    version = public[0].body["log_version"]
    for e in public[start:]:
        fixed = msgspec.structs.replace(e, digest="")
        fixed = msgspec.structs.replace(fixed, digest=seal._Opening(fixed, version).digest(out[-1].digest))
        out.append(fixed)
    return out


class _Declared:
    """Five-Card Trick's declaration with `withheld` changed (a server that seals more, or
    less, or what matters)."""

    def __init__(self, change: Any) -> None:
        self.base = FCT.views.sealed
        self.change = change

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def withheld(self, log: Any) -> dict[int, Withheld]:
        out: dict[int, Withheld] = self.change(dict(self.base.withheld(log)))
        return out


class _Views:
    def __init__(self, sealed: Any) -> None:
        self.sealed = sealed

    def __getattr__(self, name: str) -> Any:
        return getattr(FCT.views, name)


def test_a_log_that_withholds_more_or_less_than_the_rules_keep_fails() -> None:
    d = last_round_blocked_match()

    def more(w: dict[int, Withheld]) -> dict[int, Withheld]:
        return {**w, 6: Withheld(body=True, out=True)}  # seat 1's Grow, played in round 1

    def less(w: dict[int, Withheld]) -> dict[int, Withheld]:
        return {k: v for k, v in w.items() if k != 8}  # seat 0's canceled target shown

    for change, expected in (
        (more, "entry 7 (round 1): what it shows the public depends on what the log withholds"),
        (less, "entry 8 (round 2): it withholds nothing, where the rules keep its command's block"),
    ):
        forged = seal.public_log(fct, _Views(_Declared(change)), d.entries)  # type: ignore[arg-type]
        checked = seal.verify_public(GAMES_FOR, forged)
        assert not checked.ok
        assert (checked.failure or "").startswith(expected), checked.failure


def test_in_version_4_only_the_fields_the_rules_may_seal_are_committed_one_by_one() -> None:
    """Five-Card Trick may keep a Block's target secret (`sealable_fields`): in a log of
    version 4 only `block` of a submission is committed on its own, the other fields are
    in the chain as they are (no salt to show for them). A server that withheld one of
    those cannot make such a log, and a public log that shows one as a commitment does
    not verify."""
    assert sealing.sealable_of(fct) == frozenset({"block"})
    d = last_round_blocked_match(4)
    public = public_of(d)
    final0 = next(e for e in public if e.seq == 8)
    assert sealing.is_stand_in(final0.body["block"])
    assert set(final0.open["salts"]) == {"body"}, "the shown fields need no salt"
    v3 = {e.seq: e for e in public_of(last_round_blocked_match(3))}
    assert set(v3[8].open["salts"]) == {"body", "body/type", "body/round", "body/actions"}  # (no items sent)

    def actions_too(w: dict[int, Withheld]) -> dict[int, Withheld]:
        return {**w, 8: Withheld(fields=("block", "actions"), out=True)}

    with pytest.raises(ValueError, match="never seal a command's 'actions'"):
        seal.public_log(fct, _Views(_Declared(actions_too)), d.entries)  # type: ignore[arg-type]
    forged = list(public)
    forged[7] = msgspec.structs.replace(
        final0, body={**final0.body, "actions": sealing.stand_in(sealing.commit(b"\0" * 16, ["score", "block"]))}
    )
    checked = seal.verify_public(GAMES_FOR, forged)
    assert not checked.ok and "entry 8 (round 2): the entry's digest does not match" in (checked.failure or "")


def test_a_withheld_value_that_changes_an_outcome_is_caught() -> None:
    """A Block that resolved blocks what it named next round: withholding its target
    would hide what decided that round, and the verifier, trying every target, sees the
    next round come out differently."""
    d = fct_match(rounds=3, max_rounds=3)
    submit(d, 0, ["block"], block="score")
    submit(d, 1, ["grow"])
    submit(d, 0, ["grow"])
    submit(d, 1, ["score"])
    finish(d)
    assert d.states[5].game_state.seats[1].blocked == ("score",)

    def resolved_too(w: dict[int, Withheld]) -> dict[int, Withheld]:
        return {**w, 4: Withheld(fields=("block",), out=True), 6: Withheld(out=True)}

    forged = seal.public_log(fct, _Views(_Declared(resolved_too)), d.entries)  # type: ignore[arg-type]
    checked = seal.verify_public(GAMES_FOR, forged)
    assert not checked.ok
    assert "depends on what the log withholds" in (checked.failure or ""), checked.failure


def test_each_withheld_value_is_tried_alone_when_every_combination_is_too_many(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(seal, "JOINT_LIMIT", 10)  # a replaced dm12 submission could be 41
    public = public_of(last_round_blocked_match())
    checked = seal.verify_public(GAMES_FOR, public)
    assert checked.ok and checked.alone, checked
    d = fct_match(rounds=3, max_rounds=3)
    submit(d, 0, ["block"], block="score")
    submit(d, 1, ["grow"])
    submit(d, 0, ["grow"])
    submit(d, 1, ["score"])
    finish(d)

    def resolved_too(w: dict[int, Withheld]) -> dict[int, Withheld]:
        return {**w, 4: Withheld(body=True, out=True), 6: Withheld(out=True)}

    forged = seal.public_log(fct, _Views(_Declared(resolved_too)), d.entries)  # type: ignore[arg-type]
    checked = seal.verify_public(GAMES_FOR, forged)
    assert not checked.ok and checked.failure is not None
    assert "depends on what the log withholds" in checked.failure, checked.failure


# --- two worlds that differ only in what is sealed -------------------------------------------


def _masked(public: list[seal.PublicEntry]) -> bytes:
    """A public log with its commitments (and what is derived from them: a withheld
    outcome's commitment, the chained digests) written as placeholders."""

    def mask(value: Any) -> Any:
        if sealing.is_stand_in(value):
            return {"sealed": "(commitment)"}
        if isinstance(value, dict):
            return {k: mask(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mask(v) for v in value]
        return value

    lines = []
    for e in public:
        fields = mask(to_builtins(e))
        fields["digest"] = "(chained)"
        opened = e.open or {}
        if "key" not in opened and "out" not in opened.get("salts", {}) and e.kind != "create":
            fields["out"] = "(commitment)"
        lines.append(json.dumps(fields, sort_keys=True))
    return "\n".join(lines).encode()


def _frames(played: Played, viewer: Viewer) -> list[bytes]:
    """A viewer's frames of a whole twin world, the reveal and after included, as the
    server sends them live (server/streams.py)."""
    states, outcomes = played.states, played.outcomes

    def history(first: int) -> Iterator[tuple[int, MatchState, Outcome]]:
        for seq in range(first, len(states) + 1):
            yield seq, states[seq - 1], outcomes[seq - 1]

    server = Streams(FCT.views, history, [e.ts for e in played.entries], lambda: states[-1])
    frames = (server.live(viewer, seq, states[seq - 1], outcomes[seq - 1]) for seq in range(2, len(states) + 1))
    return [f for f in frames if f is not None]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), variant=st.sampled_from(["dm12", "gauntlet", "final"]))
def test_two_worlds_apart_only_in_sealed_values_look_the_same_after_the_match(seed: int, variant: str) -> None:
    """Five-Card Trick's twin worlds differ only in one seat's replaced submissions and in
    the targets of its Blocks that did not resolve: everything the rules keep sealed. To
    the other seat and a spectator (also the full view a finished match offers everyone)
    they stay the same to the end, after the reveal too; their public logs are the same
    byte for byte but for the commitments, and both verify. The seat that owns the
    secrets still sees its own."""
    twins = twins_of(FCT, variant, seed)
    played = [play(FCT, variant, w) for w in twins.worlds]
    assert all(p.states[-1].ended for p in played)
    hidden = twins.tells[0]
    viewers = {"other seat": Viewer(seat=1 - hidden), "spectator": SPECTATOR}
    for label, viewer in viewers.items():
        assert _frames(played[0], viewer) == _frames(played[1], viewer), label
    ended = [p.states[-1] for p in played]
    for viewer in viewers.values():
        assert match_view(FCT.views, ended[0], viewer) == match_view(FCT.views, ended[1], viewer)
    publics = [seal.public_log(fct, FCT.views, p.entries) for p in played]
    assert _masked(publics[0]) == _masked(publics[1])
    for public in publics:
        checked = seal.verify_public(GAMES_FOR, public)
        assert checked.ok, checked.failure
    # The worlds do differ, in clear, and to the seat whose secrets they are.
    assert [e.body for e in played[0].entries] != [e.body for e in played[1].entries]
    assert [e.digest for e in publics[0]] != [e.digest for e in publics[1]]
    assert _frames(played[0], Viewer(seat=hidden)) != _frames(played[1], Viewer(seat=hidden))


def test_the_declaration_forgets_only_what_the_rules_never_read() -> None:
    """`forget` treats the target of a Block that did not resolve, kept in the last
    round's results, as a record the rules never read again: a match whose kept target is
    changed goes on exactly as before."""
    d = fct_match(rounds=4, max_rounds=4, early_close=False)
    submit(d, 0, ["block", "claim"], block="grow")
    submit(d, 1, ["block"], block="score")
    d.advance()  # both Blocks collide
    after = len(d.entries)
    submit(d, 0, ["score", "grow"])
    submit(d, 1, ["claim", "grow"])
    finish(d)
    rest = [(e.kind, e.seat, e.body, e.ts) for e in d.entries[after:]]
    gs = d.states[after - 1].game_state
    for target in fct.ACTIONS:
        last = gs.last
        seats = tuple(msgspec.structs.replace(s, block=target) for s in last.seats)
        changed = msgspec.structs.replace(gs, last=msgspec.structs.replace(last, seats=seats))
        assert FCT.views.sealed.forget(changed) == FCT.views.sealed.forget(gs)
        ms = msgspec.structs.replace(d.states[after - 1], game_state=changed)
        for i, (kind, seat, body, ts) in enumerate(rest):
            ms, outcome = engine.step(ms, kind=kind, seat=seat, body=body, ts=ts)
            assert outcome == d.outcomes[after + i]


# --- old logs ----------------------------------------------------------------------------------


LOGS = ROOT / "tests" / "golden" / "logs"


def _ndjson(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if line]


def test_a_log_of_version_3_verifies_and_publishes_as_it_did() -> None:
    """A clear log of version 3 and its public log, both written by the code of version 3
    (tests/golden/README.md): the log folds, the public log made of it now is the same
    bytes, verifies without the audit key, and opens with it."""
    clear = [msgspec.json.decode(line, type=engine.Entry) for line in _ndjson(LOGS / "five-card-trick-v3.ndjson")]
    published = _ndjson(LOGS / "five-card-trick-v3.public.ndjson")
    assert clear[0].body["log_version"] == 3
    assert engine.verify(rules_by_name(), clear).ok
    made = public_of_entries(clear)
    assert [msgspec.json.encode(e) for e in made] == published
    public = seal.decode_public(published)
    checked = seal.verify_public(GAMES_FOR, public)  # type: ignore[arg-type]
    assert checked.ok and checked.withheld == 4, checked
    assert seal.check_unsealed(fct, FCT.views, clear, driven_audit_key(SEED), made).ok


def public_of_entries(entries: list[engine.Entry]) -> list[seal.PublicEntry]:
    return seal.public_log(fct, FCT.views, entries)


def test_the_golden_logs_of_earlier_versions_still_replay_and_verify() -> None:
    from clients.replay import print_replay, print_verify

    for path in sorted((ROOT / "tests" / "golden").glob("*.json")):
        document = json.loads(path.read_text())
        entries = [msgspec.convert(e["entry"], engine.Entry) for e in document["entries"]]
        assert not seal.is_public_log(entries)
        out = _Sink()
        assert print_replay(entries, out) and print_verify(entries, out), (path.name, out.text)


class _Sink:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


# --- through the server ----------------------------------------------------------------------


async def _play_to_canceled_blocks(base: str) -> tuple[str, str, list[str]]:
    """A one-round match on a server, both Blocks canceled (seat 0 named Claim, seat 1
    Grow): its id, audit key and seat tokens."""
    async with httpx.AsyncClient(base_url=base) as http:
        created = (
            await http.post("/matches", json={"game": "five-card-trick", "options": {"rounds": 1, "max_rounds": 1}})
        ).json()
        match, key = created["match"], created["audit_key"]
        assert created["log_version"] == engine.LOG_VERSION and len(key) == 64
        tokens = [
            (await http.post(f"/matches/{match}/seats", json={"name": n, "seat": s})).json()["token"]
            for s, n in enumerate(["Black", "White"])
        ]
    ws = base.replace("http", "ws") + "/ws"
    for seat, (actions, block) in enumerate(((["score", "block"], "claim"), (["block"], "grow"))):
        raw = await Raw.open(ws)
        await raw.hello(match, tokens[seat])
        answer = await raw.command(f"c{seat}", {"type": "submit", "round": 1, "actions": actions, "block": block})
        assert answer["type"] == "ack", answer
        await raw.close()
    return match, key, tokens


async def _hello_frames(ws: str, match: str, token: str | None = None, full: bool = False) -> list[dict[str, Any]]:
    raw = await Raw.open(ws)
    await raw.send({"type": "hello", "match": match, "token": token, "since": 0, "full": full})
    frames = [await raw.recv()]
    while True:
        try:
            frames.append(await raw.recv(timeout=0.5))
        except TimeoutError:
            break
    await raw.close()
    return frames


async def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A command run while the embedded server (in this event loop) serves it."""
    return await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )


async def test_through_the_server_the_last_rounds_canceled_block_stays_sealed() -> None:
    async with EmbeddedServer(Settings()) as srv:
        match, key, tokens = await _play_to_canceled_blocks(srv.url)
        ws = srv.url.replace("http", "ws") + "/ws"
        async with httpx.AsyncClient(base_url=srv.url) as http:
            status = (await http.get(f"/matches/{match}")).json()
            assert status["ended"] and blocks(status) == [None, None]
            public_bytes = (await http.get(f"/matches/{match}/log")).content
            clear_bytes = (await http.get(f"/matches/{match}/log", params={"audit": key})).content
            refused = await http.get(f"/matches/{match}/log", params={"audit": "00" * 32})
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "bad_audit_key"
            # the replay of every update: as the public sees it, or a seat's with the key
            replay = await http.get(f"/matches/{match}/replay", params={"as": "full"})
            assert replay.status_code == 200 and replay.json()["verified"]["ok"]
            assert '"block": "claim"' not in json.dumps(replay.json())
            assert blocks(replay.json()["updates"][-1]["view"]) == [None, None]
            refused = await http.get(f"/matches/{match}/replay", params={"as": "0"})
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "bad_audit_key"
            own = await http.get(f"/matches/{match}/replay", params={"as": "0", "audit": key})
            assert blocks(own.json()["updates"][-1]["view"]) == ["claim", None]
            own = await http.get(f"/matches/{match}/replay", params={"as": "0", "token": tokens[0]})
            assert blocks(own.json()["updates"][-1]["view"]) == ["claim", None]
            refused = await http.get(f"/matches/{match}/replay", params={"as": "0", "token": tokens[1]})
            assert refused.status_code == 403
        full = await _hello_frames(ws, match, full=True)
        spectator = await _hello_frames(ws, match)
        seat0 = await _hello_frames(ws, match, tokens[0])
        for frames in (full, spectator):
            text = json.dumps(frames)
            assert '"block": "claim"' not in text and '"block": "grow"' not in text
            assert blocks(frames[-1]["view"]) == [None, None]
        assert full[0]["role"] == "auditor"
        assert blocks(seat0[-1]["view"]) == ["claim", None]
        # the public log: withheld, verifies; in clear with the key, every seal opens
        assert b'"claim"' not in public_bytes.replace(b'"actions":["score","block"]', b"")
        assert b'"block":"claim"' in clear_bytes and b'"block":"grow"' in clear_bytes
        from clients.client import decode_log

        public, clear = decode_log(public_bytes), decode_log(clear_bytes)
        assert seal.is_public_log(public) and not seal.is_public_log(clear)
        assert seal.verify_public(GAMES_FOR, public).ok  # type: ignore[arg-type]
        assert seal.check_unsealed(fct, FCT.views, clear, bytes.fromhex(key), public).ok  # type: ignore[arg-type]
        # and as a user checks it, with the command line
        cli = [sys.executable, "-m", "clients.cli", "replay", match, "--server", srv.url, "--verify"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        said = await _run(cli, env)
        assert said.returncode == 0, said.stdout + said.stderr
        assert "verify: ok" in said.stdout and "sealed: 2 entries withhold" in said.stdout
        assert "(Claim)" not in said.stdout and "(Grow)" not in said.stdout
        said = await _run([*cli, "--unseal", key], env)
        assert said.returncode == 0, said.stdout + said.stderr
        assert "Block (Claim) [canceled" in said.stdout and "unseal: ok" in said.stdout
        said = await _run([*cli, "--unseal", "00" * 32], env)
        assert said.returncode != 0 and "bad_audit_key" in said.stderr

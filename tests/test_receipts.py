"""Receipts: the server's signed word on a match's log (server/keys.py), kept by the
client library, and `daedalus replay LOG --verify --receipts FILE` holding a log against
them (clients/replay.py), down to an entry rewritten in Redis after its round's receipt
was given."""

from __future__ import annotations

import contextlib
import io
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from clients.cli import main as cli_main
from clients.client import DaedalusHttp, MatchConnection, read_log_file, write_receipts
from clients.replay import check_receipts
from domain import engine
from domain.engine import Entry
from projections.registry import rules_by_name
from server import keys
from server.config import Settings
from server.main import EmbeddedServer
from server.messages import Receipt, server_decoder
from server.store import EventStore, log_key
from tests import toygame

toygame.install()


# --- the key -----------------------------------------------------------------------------


def test_the_key_file_is_made_once_owner_only_and_then_reused(tmp_path: Path) -> None:
    path = tmp_path / "state" / "server-key.pem"
    key = keys.load_or_create(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert keys.load_or_create(path).public_raw == key.public_raw  # the same key again
    assert sorted(p.name for p in path.parent.iterdir()) == ["server-key.pem"]  # nothing left over
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(ValueError, match="not a PEM private key"):
        keys.load_or_create(tmp_path / "junk.pem")


def test_a_receipt_verifies_and_any_change_to_it_does_not(tmp_path: Path) -> None:
    key = keys.load_or_create(tmp_path / "k.pem")
    receipt = key.receipt(match="m", seq=7, digest="ab" * 32, commitment="cd" * 32, what="round", round=3)
    assert keys.verify_receipt(receipt) and keys.verify_receipt(receipt, key.public_raw)
    for field, value in [("seq", 8), ("digest", "ef" * 32), ("match", "n"), ("round", 4), ("what", "ended")]:
        assert not keys.verify_receipt({**receipt, field: value}), field
    other = keys.generate()
    assert not keys.verify_receipt(receipt, other.public_raw)
    assert not keys.verify_receipt({**receipt, "public_key": other.public_raw.hex()})
    assert key.receipt(match="m", seq=7, digest="ab" * 32, commitment="cd" * 32, what="round", round=3) == receipt


# --- a match over the server, on fakeredis and on a real Redis ------------------------------


async def _play_toy(srv: EmbeddedServer) -> tuple[str, list[dict[str, Any]], list[MatchConnection]]:
    """A toy match to its end through the client library, each seat adding 3 a turn: its
    id, and every receipt and acknowledged digest the client library kept."""
    async with DaedalusHttp(srv.url) as http:
        created = await http.create_match("toy", options={"turn_ms": 60_000})
        match = created["match"]
        tokens = [(await http.claim_seat(match, name))["token"] for name in ("Ann", "Bob")]
        kept = list(http.receipts)
    conns = [MatchConnection(srv.url, match, token=t) for t in tokens]
    for conn in conns:
        await conn.connect()
    turn = 0
    while not (conns[0].view or {}).get("ended"):
        result = await conns[turn % 2].send_command({"type": "add", "n": 3})
        if not result.accepted:
            assert result.code == "match_over", result
            break
        assert result.digest is not None and len(result.digest) == 64
        turn += 1
    for conn in conns:
        await conn.wait_view(lambda v: v["ended"], timeout=5)
    await conns[0].close()
    await conns[1].close()
    return match, kept + [r for c in conns for r in c.receipts], conns


async def _rewrite(store: EventStore, match: str, seq: int, body: Any) -> list[Entry]:
    """Rewrite entry `seq`'s body in the match's Redis stream as a careful forger would:
    that entry and every later one proposed again through the engine (fresh outcomes and
    digests), so the forged log folds and verifies by itself; the forged log."""
    items = await store.read(match)
    entries = [e for _sid, e in items]
    ms = engine.fold(rules_by_name()["toy"], entries[: seq - 1])
    forged = entries[: seq - 1]
    for original in entries[seq - 1 :]:
        entry, ms, _ = engine.propose(
            ms, kind=original.kind, seat=original.seat, cid=original.cid,
            body=body if original.seq == seq else original.body, ts=original.ts,
        )
        forged.append(entry)
    key = log_key(match)
    await store.writes.delete(key)
    for (sid, _), entry in zip(items, forged, strict=True):
        await store.writes.xadd(key, {"e": msgspec.json.encode(entry)}, id=sid)
    return forged


async def test_receipts_name_an_entry_rewritten_in_redis_after_its_round(
    store: EventStore, tmp_path: Path
) -> None:
    settings = Settings(key_file=str(tmp_path / "key.pem"))
    async with EmbeddedServer(settings, store=store) as srv:
        match, receipts, _ = await _play_toy(srv)
        async with httpx.AsyncClient(base_url=srv.url) as http:
            served_key = (await http.get("/key")).json()
            log_text = (await http.get(f"/matches/{match}/log")).content
    assert served_key["public_key"] == keys.load_or_create(settings.key_file).public_raw.hex()
    entries = [e for _sid, e in await store.read(match)]
    whats = [r.get("what") for r in receipts if r["type"] == "receipt"]
    assert whats[0] == "created" and whats.count("ended") == 2 and "round" in whats
    assert whats.count("started") == 2  # a player's receipt of the last seat taken
    acks = [r for r in receipts if r["type"] == "ack"]
    assert acks and all(
        next(e for e in entries if e.cid == a["id"] and e.seat == a["seat"]).digest == a["digest"]
        for a in acks
    )
    assert check_receipts(entries, receipts)[1] == []

    # The second command was acknowledged and its round's receipt given (the toy's rounds
    # are turns); then the log is rewritten from it on, consistently.
    first = [e for e in entries if e.kind == "command"][1]
    round_receipt = next(r for r in receipts if r.get("what") == "round" and r["seq"] >= first.seq)
    forged = await _rewrite(store, match, first.seq, {"type": "add", "n": 1})
    assert engine.verify(rules_by_name(), forged).ok, "the forgery is consistent: verify alone passes it"
    problems = check_receipts(forged, receipts)[1]
    assert problems and problems[0].startswith(f"entry {first.seq}: rewritten after")

    # The same through the command line, on the log served after the rewrite.
    async with EmbeddedServer(settings, store=store) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        rewritten = (await http.get(f"/matches/{match}/log")).content
    assert rewritten != log_text
    (tmp_path / "log.jsonl").write_bytes(rewritten)
    write_receipts(tmp_path / "receipts.jsonl", receipts)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["replay", str(tmp_path / "log.jsonl"), "--receipts", str(tmp_path / "receipts.jsonl")])
    text = out.getvalue()
    assert code == 1, text
    assert f"receipts: FAILED: entry {first.seq}: rewritten after" in text, text
    assert "verify: ok" in text  # the chain alone does not show it
    (tmp_path / "honest.jsonl").write_bytes(log_text)
    assert check_receipts(read_log_file(tmp_path / "honest.jsonl"), receipts)[1] == []
    assert round_receipt["seq"] >= first.seq


async def test_receipts_go_to_players_on_round_ends_and_acks_carry_digests(tmp_path: Path) -> None:
    settings = Settings(key_file=str(tmp_path / "key.pem"))
    async with EmbeddedServer(settings) as srv:
        _match, _receipts, conns = await _play_toy(srv)
        async with httpx.AsyncClient(base_url=srv.url) as http:
            created = (await http.post("/matches", json={"game": "toy"})).json()
            claimed = (await http.post(f"/matches/{created['match']}/seats", json={"name": "Cy"})).json()
    for conn in conns:
        frames = [r for r in conn.receipts if r["type"] == "receipt"]
        assert frames and all(keys.verify_receipt(r) for r in frames)
        for frame in frames:  # each is the protocol's Receipt frame, field for field
            assert isinstance(server_decoder.decode(msgspec.json.encode(frame)), Receipt)
        seqs = [r["seq"] for r in frames]
        assert seqs == sorted(seqs) and frames[-1]["what"] == "ended"
    assert created["receipt"]["what"] == "created" and created["receipt"]["seq"] == 1
    assert claimed["receipt"] == created["receipt"]
    assert keys.verify_receipt(created["receipt"])


def test_receipts_of_another_match_or_forged_ones_prove_nothing(tmp_path: Path) -> None:
    from clients.driver import MatchDriver

    d = MatchDriver("toy", options={"turn_ms": 1000})
    d.seat_all()
    d.propose("command", 0, {"type": "add", "n": 3})
    entries = d.entries
    key = keys.load_or_create(tmp_path / "k.pem")
    good = {"type": "receipt", **key.receipt(
        match="simulated", seq=4, digest=entries[3].digest, commitment=d.ms.commitment, what="round", round=1,
    )}
    assert check_receipts(entries, [good])[1] == []
    forged = {**good, "digest": "00" * 32}
    assert "signature does not verify" in check_receipts(entries, [forged])[1][0]
    elsewhere = {"type": "receipt", **key.receipt(
        match="other", seq=4, digest="00" * 32, commitment="x", what="round", round=1,
    )}
    checked, problems = check_receipts(entries, [elsewhere])
    assert problems == [] and "1 of other matches skipped" in checked
    beyond = {"type": "receipt", **key.receipt(
        match="simulated", seq=9, digest="00" * 32, commitment=d.ms.commitment, what="ended", round=3,
    )}
    assert "the log ends at entry 4: entries were removed" in check_receipts(entries, [beyond])[1][0]


def test_a_receipt_is_signed_over_the_documented_bytes(tmp_path: Path) -> None:
    """docs/protocol.md and docs/fairness.md say what is signed; a verifier written from
    them, with the `cryptography` package alone, accepts the server's receipt."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = keys.load_or_create(tmp_path / "k.pem")
    receipt = key.receipt(match="q3Z", seq=7, digest="ab" * 32, commitment="cd" * 32, what="round", round=3)
    documented = (
        b"daedalus-receipt-v1\n"
        + b'{"commitment":"' + b"cd" * 32 + b'","digest":"' + b"ab" * 32
        + b'","match":"q3Z","round":3,"seq":7,"what":"round"}'
    )
    public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(receipt["public_key"]))
    public.verify(bytes.fromhex(receipt["signature"]), documented)  # raises if not
    assert receipt["key"] == hashlib_id(bytes.fromhex(receipt["public_key"]))


def hashlib_id(public: bytes) -> str:
    import hashlib

    return hashlib.sha256(public).hexdigest()[:16]

"""Receipts signed together (server/keys.py `Batch`, `ServerKey.receipts`): one Ed25519
signature over the Merkle root of the checkpoints a busy server reaches in one turn of
its event loop, each receipt with its way to the root. Each verifies alone, any change
to one does not, and a frame waiting for its receipt keeps its place among its
connection's frames."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.cli import main as cli_main
from clients.client import DaedalusHttp, MatchConnection, write_receipts
from projections.contract import Viewer
from server import keys
from server.config import Settings
from server.core import Awaiting, MatchCore
from server.hub import SendQueue
from server.main import EmbeddedServer
from server.messages import Receipt, server_decoder
from tests import toygame
from tests.test_core import GAME, Play

toygame.install()  # the toy game, hosted by the server here

KEY = keys.ServerKey(Ed25519PrivateKey.from_private_bytes(b"\x05" * 32))
SEAT0, SEAT1 = Viewer(seat=0), Viewer(seat=1)


def bodies(n: int) -> list[dict[str, Any]]:
    return [
        {"match": f"m{i}", "seq": 10 + i, "digest": f"{i:02x}" * 32, "commitment": "cd" * 32,
         "what": "round", "round": i}
        for i in range(n)
    ]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(min_value=1, max_value=40), pick=st.integers(min_value=0, max_value=39))
def test_receipts_signed_together_each_verify_and_a_change_to_any_does_not(n: int, pick: int) -> None:
    receipts = KEY.receipts(bodies(n))
    assert all(keys.verify_receipt(r, KEY.public_raw) for r in receipts)
    assert len({r["signature"] for r in receipts}) == 1
    for body, r in zip(bodies(n), receipts, strict=True):
        assert {k: r[k] for k in body} == body and r["key"] == KEY.id
    if n == 1:
        assert "batch" not in receipts[0]
        assert receipts[0] == KEY.receipt(**bodies(1)[0])  # a lone one as ever
        return
    r = receipts[pick % n]
    assert 1 <= len(r["batch"]) <= math.ceil(math.log2(n))
    for field, value in [("seq", 99), ("digest", "ef" * 32), ("match", "x"), ("round", 77), ("what", "ended")]:
        assert not keys.verify_receipt({**r, field: value}), field
    for i, (side, sibling) in enumerate(r["batch"]):
        flipped = [*r["batch"]]
        flipped[i] = ["left" if side == "right" else "right", sibling]
        assert not keys.verify_receipt({**r, "batch": flipped})
        changed = [*r["batch"]]
        changed[i] = [side, ("00" if sibling[:2] != "00" else "11") + sibling[2:]]
        assert not keys.verify_receipt({**r, "batch": changed})
        assert not keys.verify_receipt({**r, "batch": r["batch"][:i] + r["batch"][i + 1 :]})
    assert not keys.verify_receipt({k: v for k, v in r.items() if k != "batch"})
    assert not keys.verify_receipt({**r, "batch": [["up", "00" * 32]]})
    assert not keys.verify_receipt({**r, "batch": "nonsense"})
    other = receipts[(pick + 1) % n]
    assert not keys.verify_receipt({**other, "batch": r["batch"]})
    # The documented bytes: a leaf, the nodes, the root signed with its prefix.
    node = keys.receipt_leaf(r)
    for side, sibling in r["batch"]:
        pair = bytes.fromhex(sibling) + node if side == "left" else node + bytes.fromhex(sibling)
        node = __import__("hashlib").sha256(b"\x01" + pair).digest()
    KEY.private.public_key().verify(bytes.fromhex(r["signature"]), b"daedalus-receipt-batch-v1\n" + node)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.tuples(st.text(max_size=10), st.text(max_size=70), st.text(max_size=70)), min_size=1, max_size=9),
    seq=st.integers(min_value=-(2**70), max_value=2**70),
    round_=st.none() | st.integers(min_value=-(2**70), max_value=2**70),
    what=st.sampled_from(["created", "started", "round", "ended"]),
)
def test_receipt_frames_are_the_receipts_over_the_documented_bytes_whatever_their_fields(
    texts: list[tuple[str, str, str]], seq: int, round_: int | None, what: str
) -> None:
    """The frames are written out, not encoded from the receipts' dicts: each is the JSON
    of its receipt as msgspec writes it, and signs what `signed_bytes` (canonical JSON)
    says, for any text in its fields (quotes, backslashes, control characters, non-ASCII)
    and ints of any size."""
    bodies = [
        {"match": m, "seq": seq + i, "digest": d, "commitment": c, "what": what, "round": round_}
        for i, (m, d, c) in enumerate(texts)
    ]
    frames = KEY.receipt_frames(bodies)
    assert len(frames) == len(bodies)
    for body, frame in zip(bodies, frames, strict=True):
        receipt = json.loads(frame)
        assert receipt.pop("type") == "receipt"
        assert list(receipt)[:6] == ["match", "seq", "digest", "commitment", "what", "round"]
        assert {k: receipt[k] for k in body} == body and receipt["key"] == KEY.id
        assert ("batch" in receipt) == (len(bodies) > 1)
        assert keys.verify_receipt(receipt, KEY.public_raw)
        assert frame == msgspec.json.encode({"type": "receipt", **receipt})


def test_a_batch_signs_at_the_next_turn_or_when_first_needed() -> None:
    scheduled: list[Callable[[], None]] = []
    batch = keys.Batch(KEY, schedule=scheduled.append, most=4)
    tickets = [batch.ask(b) for b in bodies(3)]
    assert len(scheduled) == 1 and not any(t.signed for t in tickets) and batch.signatures == 0
    scheduled.pop()()
    assert batch.signatures == 1 and all(t.signed for t in tickets)
    assert all(keys.verify_receipt(t.receipt()) and "batch" in t.receipt() for t in tickets)
    later = [batch.ask(b) for b in bodies(2)]
    assert len(scheduled) == 1
    assert keys.verify_receipt(later[1].receipt())  # needed before the turn: signed now
    assert batch.signatures == 2 and later[0].signed
    scheduled.pop()()  # nothing left for it
    assert batch.signatures == 2
    full = [batch.ask(b) for b in bodies(4)]  # `most`: signed at once
    assert batch.signatures == 3 and all(t.signed for t in full)
    assert json.loads(full[0].frame()) == {"type": "receipt", **full[0].receipt()}
    alone = keys.Batch(KEY)  # no schedule: each signed as it is asked for
    assert alone.ask(bodies(1)[0]).signed and alone.signatures == 1


def test_two_matches_ending_rounds_in_one_turn_share_one_signature() -> None:
    """Two cores of one server (one Batch): their round ends in one turn cost one
    signature, and each player's update carries its receipt as it would alone."""
    scheduled: list[Callable[[], None]] = []
    batch = keys.Batch(KEY, schedule=scheduled.append)
    plays, alone = [], Play()
    alone.core = MatchCore(alone.log[0], "1-0", game=GAME, key=KEY)
    for play in [Play(), Play(), alone]:
        if play is not alone:
            play.core = MatchCore(play.log[0], "1-0", game=GAME, key=batch)
            plays.append(play)
        play.core.subscribe("a", SEAT0, None, {"type": "welcome"})
        play.core.subscribe("b", SEAT1, None, {"type": "welcome"})
        play.seated()
    for _ in scheduled:
        _()
    scheduled.clear()
    signed = batch.signatures
    for play in [*plays, alone]:
        play.sent.clear()
        play.add(0)  # the toy's rounds are turns: each ends one
    assert len(scheduled) == 1 and batch.signatures == signed
    waiting = [f for play in plays for frames in play.sent.values() for f in frames]
    assert waiting and all(isinstance(f, Awaiting) for f in waiting)
    scheduled.pop()()
    assert batch.signatures == signed + 1
    for play in plays:
        for who in ("a", "b"):
            (frame,) = play.sent[who]
            update = json.loads(frame.frame())  # an update, or a receipt frame (seat 1
            receipt = update if update["type"] == "receipt" else update.pop("receipt")  # sees no add)
            assert keys.verify_receipt(receipt) and len(receipt["batch"]) == 1
            assert isinstance(server_decoder.decode(json.dumps(receipt)), Receipt)
            (same,) = alone.sent[who]
            expected = json.loads(same)
            lone = expected if expected["type"] == "receipt" else expected.pop("receipt")
            if update is not receipt:
                assert update == expected  # the two toy matches are played alike
            assert {k: v for k, v in receipt.items() if k not in ("batch", "signature")} == {
                k: v for k, v in lone.items() if k != "signature"
            } | {"match": play.core.match_id}


def test_a_frame_awaiting_its_receipt_keeps_its_place_in_the_send_queue() -> None:
    async def run() -> None:
        written: list[bytes] = []

        def direct(frame: bytes) -> bool:
            written.append(frame)
            return True

        scheduled: list[Callable[[], None]] = []
        batch = keys.Batch(KEY, schedule=scheduled.append)
        queue = SendQueue(8, direct=direct)
        queue.push(b"before")
        waiting = Awaiting(b'{"type":"update","seq":3}', batch.ask(bodies(1)[0]))
        queue.push(waiting)
        queue.push(b"ack", answer=True)
        assert written == [b"before"], "the ack waits behind the update"
        frame = await queue.get()  # its batch not signed yet: signed now
        assert json.loads(frame)["seq"] == 3 and keys.verify_receipt(json.loads(frame)["receipt"])
        assert await queue.get() == b"ack"
        signed = Awaiting(None, batch.ask(bodies(2)[1]))
        batch.sign()
        queue.push(signed)  # signed already: straight to the socket
        assert written[-1] == signed.frame() and json.loads(written[-1])["type"] == "receipt"

        # Its batch signed at the next turn: written then, with what waited behind it,
        # and the sender never woken.
        written.clear()
        first = Awaiting(b'{"type":"update","seq":4}', batch.ask(bodies(3)[0]))
        second = Awaiting(b'{"type":"update","seq":5}', batch.ask(bodies(3)[1]))
        queue.push(first)
        queue.push(b"ack 4", answer=True)
        queue.push(second)
        queue.push(b"ack 5", answer=True)
        assert written == [] and not queue._ready.is_set()
        scheduled.pop()()  # the batch signed: one signature for both
        assert written == [first.frame(), b"ack 4", second.frame(), b"ack 5"]
        assert [json.loads(f)["seq"] for f in written[::2]] == [4, 5]
        assert first.ticket.receipt()["signature"] == second.ticket.receipt()["signature"]
        assert not queue._ready.is_set() and not queue._items

        # A socket that takes no more: the sender is woken for the rest, in order.
        full = SendQueue(8, direct=lambda frame: False)
        third = Awaiting(b'{"type":"update","seq":6}', batch.ask(bodies(4)[3]))
        full.push(third)
        full.push(b"ack 6", answer=True)
        assert not full._ready.is_set()
        scheduled.pop()()
        assert full._ready.is_set()
        assert json.loads(await full.get())["seq"] == 6 and await full.get() == b"ack 6"

    asyncio.run(run())


async def test_receipts_of_matches_ending_rounds_at_once_verify_through_the_server(tmp_path: Path) -> None:
    """Several toy matches played turn for turn at once on one server: their players'
    receipts verify, some were signed together, and `daedalus replay --receipts` holds a
    match's log against them."""
    settings = Settings(key_file=str(tmp_path / "key.pem"))
    async with EmbeddedServer(settings) as srv:
        async with DaedalusHttp(srv.url) as http:
            matches = []
            for _ in range(6):
                created = await http.create_match("toy", options={"turn_ms": 60_000})
                tokens = [(await http.claim_seat(created["match"], n))["token"] for n in ("Ann", "Bob")]
                matches.append((created["match"], tokens))
        conns = {m: [MatchConnection(srv.url, m, token=t) for t in tokens] for m, tokens in matches}
        for pair in conns.values():
            for conn in pair:
                await conn.connect()
        for turn in range(12):
            results = await asyncio.gather(
                *(pair[turn % 2].send_command({"type": "add", "n": 1}) for pair in conns.values())
            )
            if any(not r.accepted for r in results):
                break
            if any("batch" in r for pair in conns.values() for c in pair for r in c.receipts):
                break
        match = next(iter(conns))  # played to its end: its log is served then
        pair = conns[match]
        while not (pair[0].view or {}).get("ended"):
            turn = pair[0].view["game_state"]["turn"] if pair[0].view else 0
            result = await pair[turn % 2].send_command({"type": "add", "n": 3})
            if not result.accepted:
                assert result.code in ("match_over", "not_your_turn"), result
                await asyncio.sleep(0.01)
        await pair[1].wait_view(lambda v: v["ended"], timeout=5)
        for pair in conns.values():
            for conn in pair:
                await conn.close()
        async with httpx.AsyncClient(base_url=srv.url) as client:
            log = (await client.get(f"/matches/{match}/log")).content
            metrics = dict(
                line.split(" ", 1) for line in (await client.get("/metrics")).text.splitlines()
                if line.startswith("daedalus_receipt")
            )
    receipts = [r for pair in conns.values() for c in pair for r in c.receipts if r.get("type") == "receipt"]
    assert receipts and all(keys.verify_receipt(r) for r in receipts)
    batched = [r for r in receipts if "batch" in r]
    assert batched, "six matches ending rounds at once: some receipts signed together"
    assert len({r["match"] for r in batched}) > 1
    signed, signatures = float(metrics["daedalus_receipts_total"]), float(metrics["daedalus_receipt_signatures_total"])
    assert signed >= len({(r["match"], r["seq"]) for r in receipts}) and signatures < signed
    (tmp_path / "log.jsonl").write_bytes(log)
    write_receipts(tmp_path / "receipts.jsonl", [r for c in conns[match] for r in c.receipts])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["replay", str(tmp_path / "log.jsonl"), "--receipts", str(tmp_path / "receipts.jsonl")])
    assert code == 0, out.getvalue()
    assert "receipts: ok" in out.getvalue(), out.getvalue()
    assert msgspec.json.decode(log.splitlines()[0])["body"]["match"] == match


def test_the_batched_receipt_of_docs_protocol_md_verifies() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    examples = [json.loads(line) for line in text.splitlines() if line.startswith('{"type": "receipt"')]
    batched = [r for r in examples if "batch" in r]
    assert len(batched) == 1 and keys.verify_receipt(batched[0])
    assert keys.key_id(bytes.fromhex(batched[0]["public_key"])) == batched[0]["key"]


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.sampled_from(["bytes", "answer", "awaiting", "sign", "socket_full", "socket_free", "take"]),
        max_size=40,
    )
)
def test_a_send_queue_delivers_every_frame_once_in_order_whatever_the_signing(steps: list[str]) -> None:
    """Frames pushed among frames waiting for their receipts, batches signed at any
    moment, a socket that takes frames or does not, the sender taking some: what reaches
    the socket (written straight or taken by the sender) is every frame pushed, once, in
    the order pushed."""

    async def run() -> None:
        out: list[bytes] = []
        taking = [True]

        def direct(frame: bytes) -> bool:
            if taking[0]:
                out.append(frame)
            return taking[0]

        scheduled: list[Callable[[], None]] = []
        batch = keys.Batch(KEY, schedule=scheduled.append)
        queue = SendQueue(1000, direct=direct)
        pushed: list[Any] = []
        for n, step in enumerate(steps):
            if step in ("bytes", "answer"):
                frame = f'{{"n":{n}}}'.encode()
                queue.push(frame, answer=step == "answer")
                pushed.append(frame)
            elif step == "awaiting":
                waiting = Awaiting(f'{{"n":{n}}}'.encode(), batch.ask(bodies(1)[0]))
                queue.push(waiting)
                pushed.append(waiting)
            elif step == "sign":
                for callback in scheduled:
                    callback()
                scheduled.clear()
            elif step == "socket_full":
                taking[0] = False
            elif step == "socket_free":
                taking[0] = True
            elif step == "take" and queue._items and queue._ready.is_set():
                out.append(await queue.get())  # the sender, woken
        taking[0] = True
        for callback in scheduled:  # the next turn of the loop
            callback()
        while queue._items:  # the sender takes what is left
            out.append(await queue.get())
        expected = [p if isinstance(p, bytes) else p.frame() for p in pushed]
        assert out == expected
        assert all(keys.verify_receipt(json.loads(f)["receipt"]) for f in out if b'"receipt"' in f)

    asyncio.run(run())

"""Receipts: what signing costs the server (docs/fairness.md).

    .venv/bin/python bench/receipts.py [--matches 20] [--signatures 5000]

First the raw figures of the server's Ed25519 key (server/keys.py): receipts signed a
second and receipts verified a second. Then the cost where the server pays it: the same
Five-Card Trick (dm12) bot matches are folded, entry by entry, by a match core
(server/core.py) with two seated players and a spectator subscribed, once without a key
and once with one (a receipt per round in the players' updates, and at the start and the
end): on a busy machine that difference is within the noise, so the work a checkpoint
adds (sign, encode, splice into two updates) is also timed alone, and so is the same for
checkpoints signed 30 at a time (server/keys.py `Batch`, as a busy server signs those
of one turn of its loop). Commands are never signed: the per-entry figure is the
per-round one spread over a match's entries.

The last line is `signatures_per_s=<n> verifications_per_s=<n> us_per_round=<n>
us_per_entry=<n>` (the extra time per checkpoint, and spread over every entry).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clients.bots import BOTS  # noqa: E402
from clients.driver import simulate  # noqa: E402
from domain.engine import Entry  # noqa: E402
from projections.contract import SPECTATOR, Viewer  # noqa: E402
from server import keys  # noqa: E402
from server.core import MatchCore, _encode, with_receipt  # noqa: E402

BATCH = 30
"""Checkpoints a signature under bench/load.py's 200 matches (docs/performance.md)."""


def rate(fn: object, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return n / (time.perf_counter() - start)


def fold(entries: list[Entry], key: keys.ServerKey | None) -> tuple[float, int]:
    """Seconds to fold a match's log (after its create entry) in a core with two players
    and a spectator subscribed; how many entries came with a receipt."""
    core: MatchCore[str] = MatchCore(entries[0], stream_id="1-0", key=key)
    for name, viewer in (("a", Viewer(seat=0)), ("b", Viewer(seat=1)), ("s", SPECTATOR)):
        core.subscribe(name, viewer, 0, {"type": "welcome"})
    start = time.perf_counter()
    checkpoints = 0
    for entry in entries[1:]:
        folded = core.receive([(f"{entry.seq}-0", entry)])
        checkpoints += any(b'"type":"receipt"' in frame for _, frame in folded.sends)
    return time.perf_counter() - start, checkpoints


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--signatures", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    key = keys.generate()
    receipt = key.receipt(match="m", seq=17, digest="ab" * 32, commitment="cd" * 32, what="round", round=3)
    signs = rate(lambda: key.receipt(match="m", seq=17, digest="ab" * 32, commitment="cd" * 32, what="round", round=3), args.signatures)
    verifies = rate(lambda: keys.verify_receipt(receipt), args.signatures)
    print(f"ed25519 receipts: {signs:,.0f} signed/s ({1e6 / signs:.1f} us each), {verifies:,.0f} verified/s")

    logs = []
    for m in range(args.matches):
        bots = [BOTS["five-card-trick"][name](random.Random(f"{m}:{s}")) for s, name in enumerate(("heuristic", "random"))]
        logs.append(simulate("five-card-trick", bots, variant="dm12", seed=m.to_bytes(32, "big")).entries)
    entries = sum(len(log) - 1 for log in logs)
    rounds = 0
    plain, signed = [], []
    for _ in range(args.repeat):  # interleaved, so both meet the same machine
        t0 = sum(fold(log, None)[0] for log in logs)
        results = [fold(log, key) for log in logs]
        t1 = sum(t for t, _ in results)
        rounds = sum(n for _, n in results)
        plain.append(t0)
        signed.append(t1)
    base, with_key = min(plain), min(signed)
    extra = with_key - base
    # The work a checkpoint adds, alone: sign the receipt, encode it, put it in both
    # players' updates (what MatchCore._broadcast does once per checkpoint).
    core: MatchCore[str] = MatchCore(logs[0][0], stream_id="1-0", key=key)
    core.receive([(f"{e.seq}-0", e) for e in logs[0][1:]])
    assert core.checkpoint is not None
    update = b'{"type":"update","seq":1,"ts":1,"events":[],"view":{}}'

    seq, digest, what, round_ = core.checkpoint
    fields = {
        "match": core.match_id, "seq": seq, "digest": digest, "commitment": core.current.commitment,
        "what": what, "round": round_,
    }

    def one_checkpoint() -> None:  # (the core keeps the receipt it signed: signed here anew)
        signed_frame = _encode({"type": "receipt", **key.receipts([fields])[0]})
        for _ in range(2):
            with_receipt(update, signed_frame)

    per_round = 1 / rate(one_checkpoint, args.signatures)
    # Signed together, as a busy server signs the checkpoints of one turn of its loop
    # (keys.Batch): the same work a checkpoint, with one signature for BATCH of them.
    batch = [{**fields, "seq": seq + i} for i in range(BATCH)]

    def batched_checkpoints() -> None:
        for receipt in key.receipts(batch):
            signed_frame = _encode({"type": "receipt", **receipt})
            for _ in range(2):
                with_receipt(update, signed_frame)

    per_batched = 1 / rate(batched_checkpoints, max(1, args.signatures // BATCH)) / BATCH
    print(
        f"{args.matches} dm12 matches, {entries} entries, {rounds} checkpoints: folded with 3 "
        f"viewers in {base * 1e3:.1f} ms without a key, {with_key * 1e3:.1f} ms with one "
        f"(the fastest of {args.repeat}): {extra / base:+.1%}, {extra / rounds * 1e6:+.0f} us a "
        "checkpoint (within the noise of a busy machine)"
    )
    print(f"a checkpoint's own work (sign, encode, two updates): {per_round * 1e6:.1f} us")
    print(f"the same, {BATCH} checkpoints signed together (keys.Batch): {per_batched * 1e6:.1f} us each")
    print(
        f"signatures_per_s={signs:.0f} verifications_per_s={verifies:.0f} "
        f"us_per_round={per_round * 1e6:.1f} us_per_entry={per_round * rounds / entries * 1e6:.1f}"
    )


if __name__ == "__main__":
    main()

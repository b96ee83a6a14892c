"""The shortcuts of domain/seal.py give the bytes of the definitions in its docstring."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain import seal as sealing
from domain.canonical import canonical, to_builtins


def reference_salt(ekey: bytes, path: str, version: int = 3) -> bytes:
    if version >= 4:
        return hashlib.sha256(ekey + path.encode()).digest()[:16]
    return hmac.new(ekey, path.encode(), hashlib.sha256).digest()


versions = st.sampled_from([3, 4])


@settings(max_examples=300, deadline=None)
@given(key=st.binary(min_size=0, max_size=200), message=st.binary(max_size=300))
def test_keyed_is_hmac_sha256(key: bytes, message: bytes) -> None:
    assert sealing.Keyed(key).digest(message) == hmac.new(key, message, hashlib.sha256).digest()


@settings(max_examples=200, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), seq=st.integers(min_value=0, max_value=10**12))
def test_entry_key_is_the_defined_hmac(key: bytes, seq: int) -> None:
    expected = hmac.new(key, sealing.ENTRY_PREFIX + str(seq).encode(), hashlib.sha256).digest()
    assert sealing.entry_key(key, seq) == expected
    for version in (3, 4):  # entry_sealer: entry_key and sealer in one call
        made, defined = sealing.entry_sealer(key, seq, version, frozenset({"a"})), sealing.sealer(expected, version)
        assert type(made) is type(defined) and made.key == expected
        assert made.salt("body/a") == defined.salt("body/a")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def reference_commit(salt: bytes, value: Any) -> str:
    return hashlib.sha256(sealing.SEAL_PREFIX + salt + canonical(value)).hexdigest()


def reference_body_form(
    ekey: bytes, body: Any, version: int = 3, sealable: frozenset[str] = frozenset()
) -> Any:
    inner = body
    if isinstance(body, dict):
        inner = {
            k: {"sealed": reference_commit(reference_salt(ekey, f"body/{k}", version), v)}
            if version < 4 or k in sealable else v
            for k, v in body.items()
        }
    return {"sealed": reference_commit(reference_salt(ekey, "body", version), inner)}


names = st.frozensets(st.text(max_size=6), max_size=3)


@settings(max_examples=200, deadline=None)
@given(ekey=st.binary(min_size=32, max_size=32), body=json_values, version=versions, sealable=names)
def test_body_and_out_forms_are_the_defined_commitments(
    ekey: bytes, body: Any, version: int, sealable: frozenset[str]
) -> None:
    if isinstance(body, dict):  # some of its fields sealable, maybe
        sealable = sealable | frozenset(list(body)[: len(sealable)])
    expected = reference_body_form(ekey, body, version, sealable)
    sealer = sealing.sealer(ekey, version, sealable)
    assert sealing.body_form(sealer, body) == expected
    out = reference_commit(reference_salt(ekey, "out", version), body)
    assert sealing.out_commitment(sealer, body) == out
    assert sealing.salt(sealer, "body/x") == reference_salt(ekey, "body/x", version)
    # Whoever is shown a salt checks a commitment the same way in both versions.
    assert sealing.commit(sealing.salt(sealer, "out"), body) == out
    if version == 3:  # a key's bare bytes are version 3's, as before version 4
        assert sealing.body_form(ekey, body) == expected
        assert sealing.out_commitment(ekey, body) == out
        assert sealing.salt(ekey, "body/x") == reference_salt(ekey, "body/x")


class Move(msgspec.Struct, frozen=True):
    actions: tuple[str, ...]
    block: str | None = None


others = st.builds(Move, st.tuples(st.text(max_size=5)), st.none() | st.text(max_size=5)) | st.tuples(
    st.integers(), st.text(max_size=3)
)
bodies = json_values | others | st.dictionaries(st.text(max_size=6), json_values | others, max_size=4)


def reference_entry_digest(
    prev: str, entry: engine.Entry, audit_key: bytes | None, version: int,
    sealable: frozenset[str] = frozenset(),
) -> str:
    """engine.entry_digest as domain/seal.py's docstring defines it: every body converted
    to builtins first."""
    body = to_builtins(entry.body)
    if entry.kind == "create":
        body = sealing.create_form(body)
    elif audit_key is not None and entry.kind == "command":
        body = reference_body_form(sealing.entry_key(audit_key, entry.seq), body, version, sealable)
    fields = {
        "body": body, "cid": entry.cid, "kind": entry.kind, "out": entry.out,
        "seat": entry.seat, "seq": entry.seq, "ts": entry.ts,
    }
    return hashlib.sha256(prev.encode() + canonical(fields)).hexdigest()


@settings(max_examples=300, deadline=None)
@given(
    body=bodies,
    kind=st.sampled_from(["command", "join", "tick"]),
    audit_key=st.none() | st.binary(min_size=32, max_size=32),
    seq=st.integers(min_value=2, max_value=10**6),
    version=versions,
    sealable=names,
    # (a sealed command's fields are written out as JSON: what needs escaping, or null)
    cid=st.none() | st.text(max_size=8),
    out=st.sampled_from(["0" * 64]) | st.text(max_size=8),
    seat=st.none() | st.integers(min_value=-(2**70), max_value=2**70),
    ts=st.integers(min_value=-(2**70), max_value=2**70),
)
def test_entry_digest_is_the_defined_one(
    body: Any, kind: Any, audit_key: bytes | None, seq: int, version: int, sealable: frozenset[str],
    cid: str | None, out: str, seat: int | None, ts: int,
) -> None:
    if isinstance(body, dict):
        sealable = sealable | frozenset(list(body)[: len(sealable)])
    entry = engine.Entry(seq=seq, ts=ts, kind=kind, seat=seat, cid=cid, body=body, out=out, digest="")
    expected = reference_entry_digest("f" * 64, entry, audit_key, version, sealable)
    assert engine.entry_digest("f" * 64, entry, audit_key, log_version=version, sealable=sealable) == expected
    if audit_key is not None:
        ekey = sealing.sealer(sealing.entry_key(audit_key, seq), version, sealable)
        assert engine.entry_digest("f" * 64, entry, audit_key, ekey) == expected


def test_the_versions_salts_differ() -> None:
    """Version 4's salts are its own (a log of one version does not verify as the other)."""
    ekey = bytes(range(32))
    assert sealing.salt(sealing.sealer(ekey, 4), "out") != sealing.salt(sealing.sealer(ekey, 3), "out")[:16]
    assert len(sealing.salt(sealing.sealer(ekey, 4), "out")) == 16

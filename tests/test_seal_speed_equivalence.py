"""The shortcuts of domain/seal.py give the bytes of the definitions in its docstring."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from domain import seal as sealing
from domain.canonical import canonical


def reference_salt(ekey: bytes, path: str) -> bytes:
    return hmac.new(ekey, path.encode(), hashlib.sha256).digest()


@settings(max_examples=300, deadline=None)
@given(key=st.binary(min_size=0, max_size=200), message=st.binary(max_size=300))
def test_keyed_is_hmac_sha256(key: bytes, message: bytes) -> None:
    assert sealing.Keyed(key).digest(message) == hmac.new(key, message, hashlib.sha256).digest()


@settings(max_examples=200, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), seq=st.integers(min_value=0, max_value=10**12))
def test_entry_key_is_the_defined_hmac(key: bytes, seq: int) -> None:
    expected = hmac.new(key, sealing.ENTRY_PREFIX + str(seq).encode(), hashlib.sha256).digest()
    assert sealing.entry_key(key, seq) == expected


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def reference_body_form(ekey: bytes, body: Any) -> Any:
    def commit(salt: bytes, value: Any) -> str:
        return hashlib.sha256(sealing.SEAL_PREFIX + salt + canonical(value)).hexdigest()

    inner = body
    if isinstance(body, dict):
        inner = {k: {"sealed": commit(reference_salt(ekey, f"body/{k}"), v)} for k, v in body.items()}
    return {"sealed": commit(reference_salt(ekey, "body"), inner)}


@settings(max_examples=200, deadline=None)
@given(ekey=st.binary(min_size=32, max_size=32), body=json_values)
def test_body_and_out_forms_are_the_defined_commitments(ekey: bytes, body: Any) -> None:
    expected = reference_body_form(ekey, body)
    assert sealing.body_form(ekey, body) == expected
    assert sealing.body_form(sealing.Keyed(ekey), body) == expected
    out = hashlib.sha256(sealing.SEAL_PREFIX + reference_salt(ekey, "out") + canonical(body)).hexdigest()
    assert sealing.out_commitment(ekey, body) == out
    assert sealing.salt(ekey, "body/x") == reference_salt(ekey, "body/x")

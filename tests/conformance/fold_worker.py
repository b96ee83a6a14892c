"""Fold logs in this process and print their digests (tests/conformance/checks.py runs
it under other PYTHONHASHSEEDs).

    python -m tests.conformance.fold_worker GAME_REF < logs.json

GAME_REF is `hosted_ref` of the game; stdin a JSON list of logs (lists of
entries); stdout a JSON list of {"outcomes": [digest per entry], "state": digest}.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import msgspec

from domain import engine
from domain.canonical import canonical, sha256_hex
from domain.engine import Entry, MatchState
from projections.registry import GAMES, Hosted


def state_digest(ms: MatchState) -> str:
    """The digest of a match state's canonical bytes (every field but the rules module)."""
    fields = {name: getattr(ms, name) for name in ms.__struct_fields__ if name != "rules"}
    return sha256_hex(canonical(fields))


def fold_digests(rules: Any, entries: Sequence[Entry]) -> dict[str, Any]:
    """Fold a log, entry by entry, without checking it: each entry's recomputed outcome
    digest and the final state's digest."""
    ms = engine.open_match(rules, entries[0])
    outs = [engine.outcome_digest(engine.Outcome())]
    for entry in entries[1:]:
        new, outcome = engine.step(ms, kind=entry.kind, seat=entry.seat, body=entry.body, ts=entry.ts)
        ms = msgspec.structs.replace(new, seq=entry.seq, head=entry.digest)
        outs.append(engine.out_digest(outcome, entry.seq, ms.audit_key, log_version=ms.log_version))
    return {"outcomes": outs, "state": state_digest(ms)}


def _ref(obj: Any) -> str:
    """An importable name of a module or class ("module" or "module:Qualname")."""
    if isinstance(obj, type(sys)):
        return obj.__name__
    if isinstance(obj, type):
        return f"{obj.__module__}:{obj.__qualname__}"
    raise TypeError(f"{obj!r} is neither a module nor a class: another process cannot import it")


def hosted_ref(hosted: Hosted) -> str:
    """How another process finds `hosted`: its rules' and views' importable names (a game
    need not be registered, and one registered by a test is not in the other process's
    registry), or else its registry name."""
    try:
        return f"{_ref(hosted.rules)} {_ref(hosted.views)}"
    except TypeError:
        return f"registry:{hosted.rules.name}"


def _import(ref: str) -> Any:
    module, _, qual = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split(".") if qual else ():
        obj = getattr(obj, part)
    return obj


def resolve(ref: str) -> Hosted:
    """The Hosted game named by `hosted_ref`."""
    if ref.startswith("registry:"):
        return GAMES[ref.removeprefix("registry:")]
    rules, views = ref.split(" ")
    return Hosted(rules=_import(rules), views=_import(views))


def main(ref: str) -> None:
    hosted = resolve(ref)
    logs = msgspec.json.decode(sys.stdin.buffer.read(), type=list[list[Entry]])
    sys.stdout.buffer.write(msgspec.json.encode([fold_digests(hosted.rules, log) for log in logs]))


if __name__ == "__main__":
    main(sys.argv[1])

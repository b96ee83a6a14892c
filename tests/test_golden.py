"""Golden playthroughs: what every viewer receives of a few scripted matches, entry by entry.

Each playthrough in tests/playthrough.py (a few for every hosted game, every variant
among them) is played again and compared byte for byte with its file in tests/golden/.
A difference fails with a diff naming the entry and the viewer. After an intended
change, rewrite the files and review their diff:

    DAEDALUS_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden.py
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import hosted_games
from tests.playthrough import (
    ALL_PLAYTHROUGHS,
    PLAYTHROUGHS_OF,
    _with_bot_playthroughs,
    bots_playthrough,
    golden_document,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DAEDALUS_UPDATE_GOLDEN") == "1"
HOW_TO_UPDATE = "DAEDALUS_UPDATE_GOLDEN=1 pytest tests/test_golden.py"
DETAILED = 3  # differences shown as diffs; the rest are only listed
LISTED = 25


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, indent=1, ensure_ascii=False).splitlines()


def _diff(was: Any, now: Any, where: str) -> str:
    lines = difflib.unified_diff(
        _pretty(was), _pretty(now), fromfile=f"golden: {where}", tofile=f"now: {where}", lineterm=""
    )
    return "\n".join(lines)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, key order and number types included."""
    return json.dumps(a) == json.dumps(b)


def _where(entry: dict[str, Any] | None, label: str) -> str:
    if entry is None:
        return label
    log = entry.get("entry", {})
    who = f" by seat {log['seat']}" if log.get("seat") is not None else ""
    return f"entry {log.get('seq')} ({log.get('kind')}{who}), {label}"


def difference_report(name: str, was_bytes: bytes, now_bytes: bytes) -> str:
    """A readable account of how a regenerated playthrough differs from its golden file."""
    try:
        was = json.loads(was_bytes)
    except ValueError as exc:
        return f"golden/{name}.json is not valid JSON ({exc}); rewrite it with {HOW_TO_UPDATE}"
    now = json.loads(now_bytes)
    found: list[tuple[str, Any, Any]] = []
    for key in dict.fromkeys([*was, *now]):
        if key != "entries" and not _same(was.get(key), now.get(key)):
            found.append((f"header {key!r}", was.get(key), now.get(key)))
    old, new = was.get("entries", []), now.get("entries", [])
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else None
        b = new[i] if i < len(new) else None
        if a is None or b is None:
            gone = "not in the golden file" if a is None else "no longer produced"
            found.append((_where(a or b, f"the whole entry ({gone})"), a, b))
            continue
        for label in dict.fromkeys(["entry", "answer", *a, *b]):
            if not _same(a.get(label), b.get(label)):
                what = {"entry": "the log entry", "answer": "the answer to its sender"}.get(
                    label, f"viewer {label!r}"
                )
                found.append((_where(b, what), a.get(label), b.get(label)))
    lines = [f"playthrough {name!r} differs from tests/golden/{name}.json"]
    if not found:
        lines.append("the same content, but not the same bytes (formatting or key order):")
        lines.extend(
            list(
                difflib.unified_diff(
                    was_bytes.decode().splitlines(), now_bytes.decode().splitlines(),
                    "golden", "now", lineterm="", n=1,
                )
            )[:60]
        )
    else:
        lines.append(f"{len(found)} difference(s):")
        lines.extend(f"  - {where}" for where, _, _ in found[:LISTED])
        if len(found) > LISTED:
            lines.append(f"  ... and {len(found) - LISTED} more")
        for where, a, b in found[:DETAILED]:
            lines.append("")
            lines.append(_diff(a, b, where))
    lines.append("")
    lines.append(f"If the change is intended, rewrite the files with: {HOW_TO_UPDATE}")
    return "\n".join(lines)


@pytest.mark.parametrize("name", list(ALL_PLAYTHROUGHS))
def test_playthrough_matches_its_golden_file(name: str) -> None:
    now = golden_document(name)
    path = GOLDEN / f"{name}.json"
    if UPDATE:
        path.write_bytes(now)
        return
    if not path.exists():
        pytest.fail(f"{path} is missing; write it with {HOW_TO_UPDATE}")
    was = path.read_bytes()
    if was != now:
        pytest.fail(difference_report(name, was, now), pytrace=False)


def test_every_golden_file_is_a_playthrough() -> None:
    stale = sorted(p.name for p in GOLDEN.glob("*.json") if p.stem not in ALL_PLAYTHROUGHS)
    assert not stale, f"golden files of no playthrough (delete them): {stale}"


def _header(name: str) -> dict[str, Any]:
    """A golden file's header (test_playthrough_matches_its_golden_file keeps it true)."""
    doc: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_bytes())
    return {key: value for key, value in doc.items() if key != "entries"}


def test_every_game_and_every_variant_has_a_golden_playthrough() -> None:
    games = hosted_games()
    unplayed, unhosted = sorted(set(games) - set(PLAYTHROUGHS_OF)), sorted(set(PLAYTHROUGHS_OF) - set(games))
    assert not unplayed, f"games with no golden playthrough (add one): {unplayed}"
    assert not unhosted, f"playthroughs listed under a game not hosted: {unhosted}"
    covered: set[tuple[str, str]] = set()
    for game, plays in PLAYTHROUGHS_OF.items():
        for name in plays:
            header = _header(name)
            assert header["game"] == game, f"{name} plays {header['game']}, listed under {game}"
            covered.add((game, header["variant"]))
    wanted = {(game, v.name) for game, h in games.items() for v in h.rules.variants}
    missing = sorted(wanted - covered)
    assert not missing, f"(game, variant) with no golden playthrough (add one): {missing}"


def _secret_lines(drawing: list[str]) -> list[str]:
    """The lines of a maze drawing that show an inner wall (the others are the same for
    every maze of its size)."""
    return [line for line in drawing[1:-1] if any(c in "-|ab" for c in line[1:-1])]


def test_a_host_maze_reaches_no_player_or_spectator_before_the_end() -> None:
    doc = json.loads((GOLDEN / "minos-reserve.json").read_bytes())
    assert doc["options"]["maze"] is None
    create = doc["entries"][0]["entry"]["body"]
    assert create["options"]["maze"] is None and create["setup"]["source"] == "host"
    secret = [json.dumps(line) for line in _secret_lines(create["setup"]["drawing"])]
    assert secret
    *during, last = doc["entries"]
    for item in during:
        for label in ("seat 0", "seat 1", "spectator"):
            frame = json.dumps(item[label])
            assert '"drawing"' not in frame and not any(line in frame for line in secret), (
                item["entry"]["seq"], label,
            )
    for label in ("seat 0", "seat 1", "spectator", "full"):  # revealed at the end
        assert all(line in json.dumps(last[label]) for line in secret), label


def test_the_report_names_the_entry_and_viewer() -> None:
    name = "final-items"
    now = golden_document(name)
    doc = json.loads(now)
    doc["entries"][5]["seat 1"]["view"]["game_state"]["pot"] = 99
    doc["entries"][6]["answer"]["warnings"] = ["changed"]
    report = difference_report(name, json.dumps(doc).encode(), now)
    assert "2 difference(s)" in report
    assert "entry 6 (command by seat 1), viewer 'seat 1'" in report
    assert "entry 7 (command by seat 1), the answer to its sender" in report
    assert '-   "pot": 99,' in report and '+   "pot": 2,' in report
    same = difference_report(name, now.replace(b'\n "entries"', b'\n  "entries"'), now)
    assert "the same content, but not the same bytes" in same


def test_a_game_without_scripts_is_recorded_by_its_bots() -> None:
    """A newly registered game needs no test code for its first golden file: every variant
    gets a playthrough of its default line-up of bots."""
    generated = _with_bot_playthroughs({})
    assert set(generated) == set(hosted_games())
    for game, h in hosted_games().items():
        assert set(generated[game]) == {f"{v.name}-bots" for v in h.rules.variants}
    first, again = bots_playthrough("memory-maze", "crazy")(), bots_playthrough("memory-maze", "crazy")()
    assert first.ms.ended and first.ms.head == again.ms.head
    assert any(e.kind == "tick" for e in first.entries)

"""Golden playthroughs: what every viewer receives of a few scripted matches, entry by entry.

Each playthrough in tests/playthrough.py is played again and compared byte for byte with its file in tests/golden/.
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

from tests.playthrough import ALL_PLAYTHROUGHS, golden_document

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

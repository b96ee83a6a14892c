"""What every game must satisfy, as plain functions over a `Hosted` game.

Each check takes the game (registered in `projections.registry.GAMES` or not), a variant
and what it needs (a seed, a log), and raises AssertionError naming the game, the variant
and what broke. The tests in this package call them for every registered game and
variant, and tests/conformance/test_broken_games.py calls them on games broken on purpose
to show that each is caught.

- `check_bots_play`: the game's default bot line-up plays a match to its end through the
  engine (clients/driver.py), with or without seats that sleep through deadlines.
- `check_fold_deterministic`: folding a log gives the same outcome digests and the same
  final state in other processes (other PYTHONHASHSEEDs) as here.
- `check_verify` / `check_tampering`: `domain.engine.verify` passes on a log, and names
  the entry when any one field of any one entry is edited.
- `check_options`: the options schema clients read (`GET /games`) and `configure` agree.
- `check_docs`: a rules page with a protocol section, and bots for the default line-up.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clients.bots import BotFactory, bot_factory, lineup
from clients.bots.common import Bot
from clients.driver import MatchDriver
from domain import engine
from domain.canonical import sha256_hex, to_builtins
from domain.contract import Accepted, OptionsError
from domain.engine import Entry
from projections.common import ViewEncoder, match_view, project_events
from projections.contract import Viewer
from projections.registry import Hosted
from tests.conformance.fold_worker import fold_digests, hosted_ref

ROOT = Path(__file__).resolve().parents[2]


def where(hosted: Hosted, variant: str | None = None) -> str:
    """The game and variant, as every failure message starts."""
    return hosted.rules.name + (f" [{variant}]" if variant is not None else "")


def fail(hosted: Hosted, variant: str | None, what: str) -> AssertionError:
    return AssertionError(f"{where(hosted, variant)}: {what}")


def match_seed(hosted: Hosted, variant: str, seed: int) -> bytes:
    """The 32-byte match seed of conformance match `seed` of a game's variant."""
    return hashlib.sha256(f"conformance:{hosted.rules.name}:{variant}:{seed}".encode()).digest()


# --- bots play to the end -------------------------------------------------------------


class Drowsy:
    """A bot that, from its own seeded `random.Random`, sometimes does not act: it falls
    asleep (with probability `p` each time it is shown a view with a deadline) and wakes
    when the view's deadline changes, so the deadline may pass without it. `naps` records
    (deadline, entries before, entries after) for each sleep, `now` counting entries."""

    def __init__(self, bot: Bot, rng: random.Random, p: float, now: Callable[[], int]) -> None:
        self.bot = bot
        self.rng = rng
        self.p = p
        self.now = now
        self.asleep: int | None = None
        self.since = 0
        self.naps: list[tuple[int, int, int]] = []

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        due = view.get("deadline")
        if self.asleep is not None:
            if due == self.asleep:
                return []
            self.naps.append((self.asleep, self.since, self.now()))
            self.asleep = None
        on = view.get("started") and not view.get("ended")
        if on and isinstance(due, int) and self.rng.random() < self.p:
            self.asleep, self.since = due, self.now()
            return []
        return self.bot.act(view)

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        self.bot.feedback(command, accepted, warnings, code)


def default_bots(hosted: Hosted, seats: int) -> list[BotFactory]:
    """The game's default line-up for `seats` seats (clients.bots.lineup)."""
    game = hosted.rules.name
    return [bot_factory(game, name) for name in lineup(game, seats)]


@dataclass
class BotMatch:
    """A bot match played through the driver, and the naps of its drowsy seats."""

    driver: MatchDriver
    naps: list[tuple[int, int, int, int]] = field(default_factory=list)  # (seat, deadline, from, to)

    @property
    def entries(self) -> list[Entry]:
        return self.driver.entries

    def missed_deadlines(self) -> int:
        """Deadlines that expired (a tick for them produced events) while a seat slept."""
        d = self.driver
        missed = 0
        for _seat, due, start, end in self.naps:
            missed += any(
                e.kind == "tick" and e.body == {"deadline": due} and d.outcomes[i].events
                for i, e in enumerate(d.entries[start:end], start)
            )
        return missed


def play_match(
    hosted: Hosted,
    variant: str,
    seed: int,
    *,
    miss: float = 0.0,
    bots: Callable[[int], Sequence[BotFactory]] | None = None,
    options: Mapping[str, Any] | None = None,
    max_entries: int = 20_000,
) -> BotMatch:
    """Match `seed` of `variant` between the default line-up (or `bots(seats)`), each
    bot seeded from the seed and its seat; with `miss` > 0 every bot is `Drowsy`."""
    d = MatchDriver(hosted, variant=variant, options=options, seed=match_seed(hosted, variant, seed))
    factories = (bots or (lambda n: default_bots(hosted, n)))(d.seats)
    players: list[Any] = [
        f(random.Random(f"{hosted.rules.name}:{variant}:{seed}:{seat}")) for seat, f in enumerate(factories)
    ]
    if miss > 0:
        players = [
            Drowsy(b, random.Random(f"drowsy:{seed}:{seat}"), miss, lambda: len(d.entries))
            for seat, b in enumerate(players)
        ]
    d.seat_all([f"bot {seat}" for seat in range(d.seats)])
    try:
        d.play_bots(players, max_entries=max_entries)
    except Exception as exc:
        raise fail(hosted, variant, f"bots did not play match {seed} to its end: {exc!r}") from exc
    match = BotMatch(d)
    for seat, b in enumerate(players):
        if isinstance(b, Drowsy):
            match.naps += [(seat, due, start, end) for due, start, end in b.naps]
            if b.asleep is not None:
                match.naps.append((seat, b.asleep, b.since, len(d.entries)))
    return match


def check_bots_play(
    hosted: Hosted,
    variant: str,
    seed: int,
    *,
    miss: float = 0.0,
    bots: Callable[[int], Sequence[BotFactory]] | None = None,
) -> BotMatch:
    """Bots play match `seed` to its end: a result the rules give, a log that verifies.
    With `miss` > 0, the match must also have gone on past a deadline a seat slept through."""
    m = play_match(hosted, variant, seed, miss=miss, bots=bots)
    ms = m.driver.ms
    if not ms.ended or ms.result is None:
        raise fail(hosted, variant, f"match {seed} stopped without ending")
    winner = ms.result.winner
    if winner is not None and not 0 <= winner < ms.seats:
        raise fail(hosted, variant, f"match {seed} is won by seat {winner} of {ms.seats}")
    if ms.rules.result(ms.game_state) != ms.result:
        raise fail(hosted, variant, f"match {seed}: the recorded result is not the final state's")
    check_verify(hosted, variant, m.entries)
    if miss > 0 and not m.missed_deadlines():
        raise fail(hosted, variant, f"match {seed}: no seat slept through a deadline ({len(m.naps)} naps)")
    return m


# --- the fold is deterministic across processes ---------------------------------------


def fold_elsewhere(
    hosted: Hosted, logs: Sequence[Sequence[Entry]], hash_seeds: Sequence[str | None]
) -> list[list[dict[str, Any]]]:
    """`fold_digests` of each log in a new Python process for each of `hash_seeds` (its
    PYTHONHASHSEED; None: the environment's), the processes run side by side."""
    data = msgspec.json.encode([list(log) for log in logs])
    procs = []
    for hash_seed in hash_seeds:
        env = dict(os.environ)
        if hash_seed is not None:
            env["PYTHONHASHSEED"] = hash_seed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "tests.conformance.fold_worker", hosted_ref(hosted)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env,
            )
        )
    results = []
    for proc in procs:
        out, err = proc.communicate(data, timeout=120)
        if proc.returncode != 0:
            raise AssertionError(f"the fold in another process failed:\n{err.decode()[-3000:]}")
        results.append(json.loads(out))
    return results


def other_hash_seeds() -> tuple[str | None, str]:
    """The environment's PYTHONHASHSEED (None: as set, or random) and another fixed one."""
    current = os.environ.get("PYTHONHASHSEED")
    other = str(int(current) + 1) if current and current.isdigit() else "0"
    return None, other


def check_fold_deterministic(
    hosted: Hosted,
    variant: str,
    logs: Sequence[Sequence[Entry]],
    hash_seeds: Sequence[str | None] | None = None,
) -> None:
    """Every log folds to the same outcome digests (the recorded ones) and the same final
    state here and in a process of each of `hash_seeds` (default: `other_hash_seeds`)."""
    here = [fold_digests(hosted.rules, log) for log in logs]
    for n, (log, mine) in enumerate(zip(logs, here, strict=True)):
        recorded = [e.out for e in log]
        if mine["outcomes"] != recorded:
            seq = next(i + 1 for i, (a, b) in enumerate(zip(mine["outcomes"], recorded, strict=True)) if a != b)
            raise fail(hosted, variant, f"log {n}: entry {seq}'s outcome folds differently from the one recorded")
    seeds = list(hash_seeds if hash_seeds is not None else other_hash_seeds())
    for hash_seed, elsewhere in zip(seeds, fold_elsewhere(hosted, logs, seeds), strict=True):
        label = f"PYTHONHASHSEED={hash_seed}" if hash_seed is not None else "this environment's PYTHONHASHSEED"
        for n, (mine, theirs) in enumerate(zip(here, elsewhere, strict=True)):
            for seq, (a, b) in enumerate(zip(mine["outcomes"], theirs["outcomes"], strict=True), 1):
                if a != b:
                    raise fail(
                        hosted, variant,
                        f"log {n}: entry {seq}'s outcome differs in a process with {label} (the fold is not deterministic)",
                    )
            if mine["state"] != theirs["state"]:
                raise fail(
                    hosted, variant,
                    f"log {n}: the final state differs in a process with {label} (the fold is not "
                    "deterministic: a set or hash order reaching the state?)",
                )


# --- verify, and edits it finds --------------------------------------------------------


def check_verify(hosted: Hosted, variant: str, entries: list[Entry]) -> None:
    got = engine.verify({hosted.rules.name: hosted.rules}, entries)
    if not got.ok:
        raise fail(hosted, variant, f"verify fails on a log played through the engine: {got.failure}")


def _edits(entry: Entry, seats: int) -> Iterator[tuple[str, Entry]]:
    """One edit of each field of `entry`, left unsealed."""
    replace = msgspec.structs.replace
    yield "ts", replace(entry, ts=entry.ts + 1)
    yield "seat", replace(entry, seat=0 if entry.seat is None else (None if seats < 2 else (entry.seat + 1) % seats))
    body = entry.body
    edited = {**body, "edited": True} if isinstance(body, dict) else {"edited": body}
    yield "body", replace(entry, body=edited)
    yield "out", replace(entry, out=sha256_hex(entry.out.encode()))
    yield "digest", replace(entry, digest=sha256_hex(entry.digest.encode()))
    yield "cid", replace(entry, cid=(entry.cid or "") + "x")


def check_tampering(hosted: Hosted, variant: str, entries: list[Entry], rng: random.Random, per_field: int = 2) -> int:
    """An edit to one field of one entry (the first, the last and others drawn from `rng`)
    makes verify fail naming that entry; and a new outcome digest sealed into the chain
    (the entry's and every later digest recomputed) is found at that entry too. The
    number of edits tried."""
    rules_for = {hosted.rules.name: hosted.rules}
    seats = engine.open_match(hosted.rules, entries[0]).seats
    picks = sorted({0, len(entries) - 1, *rng.sample(range(len(entries)), min(per_field, len(entries)))})
    tried = 0
    for i in picks:
        for name, edited in _edits(entries[i], seats):
            got = engine.verify(rules_for, [*entries[:i], edited])  # verify stops at the first failure
            tried += 1
            if got.ok or got.failed_seq != entries[i].seq:
                raise fail(
                    hosted, variant,
                    f"an edit of entry {entries[i].seq}'s {name} is "
                    + ("not found" if got.ok else f"named as entry {got.failed_seq}: {got.failure}"),
                )
        if i == 0:
            continue
        resealed = _reseal(entries, i, out=sha256_hex(b"another outcome", entries[i].out.encode()))
        got = engine.verify(rules_for, resealed)
        tried += 1
        if got.ok or got.failed_seq != entries[i].seq:
            raise fail(
                hosted, variant,
                f"entry {entries[i].seq} with another outcome, the chain sealed again, is "
                + ("not found" if got.ok else f"named as entry {got.failed_seq}: {got.failure}"),
            )
    return tried


def _reseal(entries: list[Entry], i: int, out: str) -> list[Entry]:
    """The log with entry i's outcome digest replaced and the chain recomputed from it."""
    log = list(entries[:i])
    prev = entries[i - 1].digest
    for n, entry in enumerate(entries[i:], i):
        entry = msgspec.structs.replace(entry, out=out) if n == i else entry
        entry = msgspec.structs.replace(entry, digest=engine.entry_digest(prev, entry))
        log.append(entry)
        prev = entry.digest
    return log


# --- options: the schema and configure agree --------------------------------------------

# One value of each JSON type, for "every wrong type".
JSON_SAMPLES: Mapping[str, Any] = {
    "integer": 7,
    "number": 0.5,
    "boolean": True,
    "string": "x",
    "array": [],
    "object": {},
    "null": None,
}
JUNK = "?? not a valid value ??"
UNKNOWN = "no_such_option"


def types_of(entry: Mapping[str, Any]) -> list[str]:
    t = entry.get("type")
    if t is None:
        return []
    return list(t) if isinstance(t, list) else [t]


def accepts_type(entry: Mapping[str, Any], json_type: str) -> bool:
    types = types_of(entry)
    if not types:
        return True
    return json_type in types or (json_type == "integer" and "number" in types)


def names(message: str, option: str) -> bool:
    """Whether an error message names `option` (as a whole word: 'rounds' is not named
    by 'max_rounds')."""
    return re.search(rf"(?<![\w]){re.escape(option)}(?![\w])", message) is not None


def inside(entry: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values the schema entry allows. A string with a grammar (one that has `examples`)
    is drawn from its default and examples only."""
    if "examples" in entry:
        return st.sampled_from([entry.get("default"), *entry["examples"]])
    if "enum" in entry:
        return st.sampled_from(list(entry["enum"]))
    strategies: list[st.SearchStrategy[Any]] = []
    for t in types_of(entry):
        if t == "integer":
            lo = entry.get("minimum")
            if "exclusiveMinimum" in entry:
                lo = math.floor(entry["exclusiveMinimum"]) + 1
            strategies.append(st.integers(min_value=lo, max_value=entry.get("maximum")))
        elif t == "number":
            strategies.append(
                st.floats(
                    min_value=entry.get("exclusiveMinimum", entry.get("minimum")),
                    max_value=entry.get("maximum"),
                    exclude_min="exclusiveMinimum" in entry,
                    allow_nan=False,
                    allow_infinity=False,
                )
            )
        elif t == "boolean":
            strategies.append(st.booleans())
        elif t == "null":
            strategies.append(st.none())
        elif t == "array" and "items" in entry:
            strategies.append(
                st.lists(
                    inside(entry["items"]),
                    min_size=entry.get("minItems", 0),
                    max_size=entry.get("maxItems", 5),
                    unique_by=(lambda v: json.dumps(v, sort_keys=True)) if entry.get("uniqueItems") else None,
                )
            )
        elif t == "string":
            strategies.append(st.text(max_size=20))
    if not strategies:
        raise AssertionError(f"no values can be drawn from the schema entry {dict(entry)!r}")
    return st.one_of(strategies)


def a_valid(entry: Mapping[str, Any]) -> Any:
    """One value the schema entry allows (the plainest)."""
    if "examples" in entry or "default" in entry:
        return entry.get("default", entry.get("examples", [None])[0])
    if "enum" in entry:
        return entry["enum"][0]
    t = types_of(entry)[0] if types_of(entry) else "null"
    if t == "array":
        return [a_valid(entry.get("items", {})) for _ in range(entry.get("minItems", 0))]
    if t in ("integer", "number"):
        return entry.get("minimum", entry.get("exclusiveMinimum", 0) + 1)
    return JSON_SAMPLES[t]


def outside(entry: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Values the schema entry excludes, each with what is wrong with it: every bound
    passed by one (just past an exclusive one), every wrong type, a value off the enum,
    a junk string for a grammar, arrays of the wrong size, repeated or wrong items."""
    types = types_of(entry)
    for t, sample in JSON_SAMPLES.items():
        if types and not accepts_type(entry, t):
            yield f"a value of type {t}", sample
    if "minimum" in entry:
        lo = entry["minimum"]
        yield "below the minimum", lo - 1
        if "number" in types:
            yield "just below the minimum", math.nextafter(lo, -math.inf)
    if "maximum" in entry:
        hi = entry["maximum"]
        yield "above the maximum", hi + 1
        if "number" in types:
            yield "just above the maximum", math.nextafter(hi, math.inf)
            yield "infinity", math.inf
    if "exclusiveMinimum" in entry:
        lo = entry["exclusiveMinimum"]
        yield "at the exclusive minimum", lo
        yield "below the exclusive minimum", lo - 1
    if "enum" in entry:
        yield "a value off the enum", JUNK if all(isinstance(v, str) for v in entry["enum"]) else 12345
    if "examples" in entry and "string" in types:
        yield "a junk string", JUNK
    if "array" in types and "items" in entry:
        items = entry["items"]
        good = a_valid(items)
        if entry.get("minItems", 0) > 0:
            yield "too few items", [good] * (entry["minItems"] - 1)
        if "maxItems" in entry:
            yield "too many items", [good] * (entry["maxItems"] + 1)
        size = max(entry.get("minItems", 0), 1)
        for what, bad in outside(items):
            yield f"an item that is {what}", [bad, *[good] * (size - 1)]
        if "examples" in entry and "string" in types_of(items):
            yield "junk lines", [JUNK] * size
        if entry.get("uniqueItems"):
            n = max(2, entry.get("minItems", 0))
            if n <= entry.get("maxItems", n):
                yield "a repeated item", [good] * n


def _named_options(message: str, schema: Mapping[str, Any]) -> list[str]:
    return [name for name in schema if names(message, name)]


def check_options(
    hosted: Hosted,
    variant: str,
    schema: Mapping[str, Any] | None = None,
    *,
    max_examples: int = 60,
) -> None:
    """The schema (what `GET /games` publishes: `rules.options_schema`) and `configure`
    agree for `variant`:

    - options drawn inside the schema configure (hypothesis), and what they configure to,
      recorded as a match records it, configures again; a refusal is allowed only for a
      combination (the message names two or more options: "max_rounds is below rounds"),
      since a per-option schema cannot state it;
    - outside it, one option at a time (`outside`), an unknown name, and an option other
      variants list but this one does not (at a value that is not this variant's), they
      are refused with an OptionsError that names the option."""
    rules = hosted.rules
    if schema is None:
        schema = rules.options_schema(variant)
    for name, entry in schema.items():
        if "default" not in entry or "description" not in entry or "type" not in entry:
            raise fail(hosted, variant, f"option {name!r}: the schema needs a type, a default and a description")
        for example in entry.get("examples", ()):
            _must_configure(hosted, variant, {name: example}, schema, f"its example {example!r}")

    _must_configure(hosted, variant, {}, schema, "no options")
    _must_configure(hosted, variant, {n: e["default"] for n, e in schema.items()}, schema, "every default")

    @settings(
        max_examples=max_examples, deadline=None, suppress_health_check=list(HealthCheck), database=None,
        report_multiple_bugs=False,
    )
    @given(st.fixed_dictionaries({}, optional={name: inside(entry) for name, entry in schema.items()}))
    def drawn_inside(options: dict[str, Any]) -> None:
        _must_configure(hosted, variant, options, schema, "drawn inside the schema")

    drawn_inside()

    for name, entry in schema.items():
        for what, value in outside(entry):
            _must_refuse(hosted, variant, {name: value}, name, f"{what} ({value!r})")
    _must_refuse(hosted, variant, {UNKNOWN: 1}, UNKNOWN, "an unknown option")

    defaults = to_builtins(rules.configure(variant, {}))
    for other in rules.variants:
        for name, entry in rules.options_schema(other.name).items():
            if name in schema:
                continue
            mine = defaults.get(name) if isinstance(defaults, dict) else None
            candidates = [entry.get("default"), *entry.get("examples", ()), *entry.get("enum", ())]
            candidates += [entry[k] for k in ("minimum", "maximum") if k in entry]
            value = next((c for c in candidates if c != mine and c is not None), None)
            if value is not None:
                _must_refuse(
                    hosted, variant, {name: value}, name,
                    f"an option of {other.name} only, at {value!r} (here {mine!r})",
                )


def _must_configure(
    hosted: Hosted, variant: str, options: Mapping[str, Any], schema: Mapping[str, Any], what: str
) -> None:
    rules = hosted.rules
    try:
        configured = rules.configure(variant, dict(options))
    except OptionsError as exc:
        if len(_named_options(str(exc), {n: 1 for n in options} | dict(schema))) >= 2:
            return  # a constraint between options
        raise fail(hosted, variant, f"options inside the schema ({what}) are refused: {options!r}: {exc}") from None
    except Exception as exc:
        raise fail(hosted, variant, f"options {options!r} ({what}) make configure raise {exc!r}") from exc
    recorded = to_builtins(rules.public_options(configured))  # as the create entry records them
    try:
        rules.configure(variant, recorded)
    except OptionsError as exc:
        raise fail(hosted, variant, f"the options recorded for {options!r} do not configure again: {exc}") from None


def _must_refuse(hosted: Hosted, variant: str, options: Mapping[str, Any], name: str, what: str) -> None:
    try:
        hosted.rules.configure(variant, dict(options))
    except OptionsError as exc:
        if not names(str(exc), name):
            raise fail(hosted, variant, f"option {name!r} {what} is refused without naming it: {exc}") from None
        return
    except Exception as exc:
        raise fail(hosted, variant, f"option {name!r} {what} makes configure raise {exc!r}, not OptionsError") from exc
    raise fail(hosted, variant, f"option {name!r} {what} is outside the schema, yet configure accepts it")


# --- documentation and bots ----------------------------------------------------------------

RULES_DIR = ROOT / "docs" / "rules"


def rules_page(hosted: Hosted) -> Path:
    return RULES_DIR / f"{hosted.rules.name}.md"


def protocol_section(text: str) -> str | None:
    """The "## Protocol" section of a rules page (to the next level-2 heading)."""
    match = re.search(r"^## Protocol[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else None


def command_tags(hosted: Hosted) -> list[str]:
    """The `type` of every command the game takes."""
    info = msgspec.inspect.type_info(hosted.rules.command_type)
    types = info.types if isinstance(info, msgspec.inspect.UnionType) else (info,)
    return [str(t.tag) for t in types if isinstance(t, msgspec.inspect.StructType) and t.tag is not None]


def check_docs(hosted: Hosted, root: Path = ROOT) -> None:
    """A rules page docs/rules/<game>.md naming every variant, with a "## Protocol"
    section showing every command type, and links that lead somewhere."""
    page = root / "docs" / "rules" / f"{hosted.rules.name}.md"
    if not page.is_file():
        raise fail(hosted, None, f"no rules page {page.relative_to(root)}")
    text = page.read_text()
    for v in hosted.rules.variants:
        if f"`{v.name}`" not in text:
            raise fail(hosted, v.name, f"{page.relative_to(root)} does not name the variant as `{v.name}`")
    section = protocol_section(text)
    if section is None or not section.strip():
        raise fail(hosted, None, f"{page.relative_to(root)} has no '## Protocol' section")
    for tag in command_tags(hosted):
        if f'"type": "{tag}"' not in section:
            raise fail(hosted, None, f"the protocol section of {page.relative_to(root)} shows no {tag!r} command")
    try:
        check_links(page, root)
    except AssertionError as exc:
        raise fail(hosted, None, str(exc)) from None


def anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it ("`final`: items" -> "final-items")."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def check_links(page: Path, root: Path = ROOT) -> None:
    """Every relative link of a Markdown page leads to a file, and to a heading of it."""
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.is_file():
            raise AssertionError(f"{page.relative_to(root)}: the link {target} leads to no file")
        if fragment:
            headings = re.findall(r"^#+ (.*)$", linked.read_text(), re.M)
            if fragment not in {anchor(h) for h in headings}:
                raise AssertionError(f"{page.relative_to(root)}: the link {target} leads to no heading")


def check_bots_exist(hosted: Hosted, variant: str) -> None:
    """Bots for the default line-up of the variant's default seat count."""
    seats = hosted.rules.seat_count(hosted.rules.configure(variant, {}))
    try:
        factories = default_bots(hosted, seats)
    except (KeyError, ValueError) as exc:
        raise fail(hosted, variant, f"no default bot line-up: {exc}") from exc
    if len(factories) != seats:
        raise fail(hosted, variant, f"the default line-up has {len(factories)} bots for {seats} seats")


# --- the JSON shortcuts give the bytes of the plain views --------------------------------


def check_json_shortcuts(hosted: Hosted, variant: str, match: BotMatch) -> int:
    """What the server sends is what the game's `view` and `event` say: for every entry of
    a bot match and every kind of viewer (each seat, a spectator, the full view),
    projections.common.ViewEncoder's bytes (built with the game's `view_json` and
    `event_json` where its projection module has them) are those of encoding
    `match_view` and `project_events`. Returns the number of comparisons."""
    views = hosted.views
    encoder = ViewEncoder(views)
    d = match.driver
    viewers = {f"seat {s}": Viewer(seat=s) for s in range(d.ms.seats)}
    viewers.update({"a spectator": Viewer(seat=None), "the full view": Viewer(seat=None, full=True)})
    checked = 0
    for seq, (ms, outcome) in enumerate(zip(d.states, d.outcomes, strict=True)):
        if seq == 0:
            continue
        for label, viewer in viewers.items():
            view = msgspec.json.encode(match_view(views, ms, viewer))
            if encoder.encode(ms, viewer) != view:
                raise fail(hosted, variant, f"entry {seq}: {label}: the view as sent is not its `view` encoded")
            events = project_events(views, ms, outcome, viewer)
            if encoder.events(ms, outcome, viewer) != (msgspec.json.encode(events) if events else None):
                raise fail(hosted, variant, f"entry {seq}: {label}: the events as sent are not its `event`s encoded")
            checked += 1
    return checked


def check_decoded_command_given(hosted: Hosted, variant: str, match: BotMatch) -> int:
    """`engine.propose` given a command's decoded form (`command=`, as the server gives
    what it decoded to check the command) decides what it decides from the body alone:
    for every command of a bot match whose body decodes, the same entry, state and
    outcome. Returns the number of commands compared."""
    d = match.driver
    compared = 0
    for seq, entry in enumerate(d.entries):
        if entry.kind != "command" or seq == 0:
            continue
        try:
            command = engine.decode_command(hosted.rules, entry.body)
        except msgspec.ValidationError:
            continue
        before = d.states[seq - 1]
        args = {"kind": entry.kind, "seat": entry.seat, "cid": entry.cid, "body": entry.body, "ts": entry.ts}
        plain = engine.propose(before, **args)
        given_one = engine.propose(before, **args, command=command)
        if plain != given_one:
            raise fail(hosted, variant, f"entry {seq + 1}: proposed with its decoded command, it differs")
        compared += 1
    return compared


class _FoldedByTheEngine:
    """A game's rules whose accepted decisions carry no state: the engine folds their
    events itself (counting the decisions that carried one)."""

    def __init__(self, rules: Any) -> None:
        self._rules = rules
        self.stripped = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)

    def decide(self, state: Any, seat: int, command: Any, now: int) -> Any:
        decision = self._rules.decide(state, seat, command, now)
        if isinstance(decision, Accepted) and decision.state is not None:
            self.stripped += 1
            return msgspec.structs.replace(decision, state=None)
        return decision


def check_decided_state_is_the_fold(hosted: Hosted, variant: str, match: BotMatch) -> int:
    """A decision that carries the state its events fold to (`Accepted.state`, which the
    engine takes as it is) carries what folding them gives: for every command of a bot
    match (played by `hosted`'s rules or by rules that fold as they do), `engine.propose`
    decides the same entry, state and outcome when the rules' decisions carry no state.
    Returns the number of decisions that carried one."""
    d = match.driver
    unfolded = _FoldedByTheEngine(hosted.rules)
    for seq, entry in enumerate(d.entries):
        if entry.kind != "command" or seq == 0:
            continue
        before = msgspec.structs.replace(d.states[seq - 1], rules=hosted.rules)
        args = {"kind": entry.kind, "seat": entry.seat, "cid": entry.cid, "body": entry.body, "ts": entry.ts}
        taken = engine.propose(before, **args)
        carried = unfolded.stripped
        e, ms, outcome = engine.propose(msgspec.structs.replace(before, rules=unfolded), **args)
        if unfolded.stripped == carried:
            continue
        if (e, msgspec.structs.replace(ms, rules=before.rules), outcome) != taken:
            raise fail(hosted, variant, f"entry {seq + 1}: the state its decision carried is not its events' fold")
    return unfolded.stripped

"""Match options as one table per game: the schema clients read, the defaults of every
variant and the validation all come from the same declarations.

A game declares each option once:

    TABLE = OptionTable(Options, VARIANT_NAMES, [
        Integer("round_seconds", 60, 1, 86_400, "seconds each player has to submit",
                defaults={"gauntlet": 90}),
        Number("clock_scale", 1.0, "every clock is multiplied by this", above=0, maximum=1000),
        Boolean("early_close", True, "resolve a round as soon as every seat is in"),
        ...
    ])

and then `TABLE.schema(variant)` is what `GET /games` publishes, `TABLE.configure(variant,
options)` the validated `Options` struct (or OptionsError naming the option), and
`TABLE.defaults(variant)` the variant's defaults. Every bound the validation enforces is in
the schema, so a client that stays inside the schema is never refused, and the
conformance suite checks both directions.

An option that applies to some variants only (`variants=`) is listed in those variants'
schemas; elsewhere it may be given only at its default value (recorded options name every
field of the struct, so a match's create entry must configure again). A `nullable`
option takes `null` as "the default of this variant".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from domain.contract import OptionsError

S = TypeVar("S")

# Every clock multiplier stays within this: a clock of a day at the top of the range is
# still a number of milliseconds that fits a 64-bit integer, in JSON and in Redis.
MAX_CLOCK_SCALE = 1000.0

_NOTHING: Any = object()


@dataclass(frozen=True)
class Option:
    """One option: its name, JSON type, default, bounds, description and variants.

    Use the typed constructors below (Integer, Number, Boolean, Text, Custom)."""

    name: str
    type: str | list[str]
    default: Any
    description: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    variants: tuple[str, ...] | None = None
    nullable: bool = False
    bounds: Mapping[str, Any] = field(default_factory=dict)
    schema_extra: Mapping[str, Any] | Callable[[str], Mapping[str, Any]] = field(
        default_factory=dict
    )
    parse: Callable[[Any, str], Any] | None = None
    """For Custom options: the value (not None) checked and normalised for a variant;
    raise OptionsError with the message after "option 'name': "."""

    def default_for(self, variant: str) -> Any:
        return self.defaults.get(variant, self.default)

    def applies(self, variant: str) -> bool:
        return self.variants is None or variant in self.variants

    def schema_for(self, variant: str) -> dict[str, Any]:
        types: str | list[str] = self.type
        if self.nullable:
            types = [*(types if isinstance(types, list) else [types]), "null"]
        extra = self.schema_extra(variant) if callable(self.schema_extra) else self.schema_extra
        entry: dict[str, Any] = {"type": types, **self.bounds, **extra}
        entry["default"] = _json(self.default_for(variant))
        entry["description"] = self.description
        return entry

    def check(self, value: Any, variant: str) -> Any:
        """The value checked against the declaration: OptionsError naming the option."""
        key = self.name
        if self.type == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                raise OptionsError(f"option {key!r} must be an integer")
            lo, hi = self.bounds["minimum"], self.bounds["maximum"]
            if not lo <= value <= hi:
                raise OptionsError(f"option {key!r} must be between {lo} and {hi}")
            return value
        if self.type == "number":
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise OptionsError(f"option {key!r} must be a number")
            number = float(value)
            above, hi = self.bounds["exclusiveMinimum"], self.bounds["maximum"]
            if not math.isfinite(number) or number <= above:
                raise OptionsError(f"option {key!r} must be a finite number above {above:g}")
            if number > hi:
                raise OptionsError(f"option {key!r} must be at most {hi:g}")
            return number
        if self.type == "boolean":
            if not isinstance(value, bool):
                raise OptionsError(f"option {key!r} must be true or false")
            return value
        assert self.parse is not None, f"option {key!r} has no parser"
        try:
            return self.parse(value, variant)
        except OptionsError as exc:
            raise OptionsError(f"option {key!r}: {exc}") from None


def _json(value: Any) -> Any:
    """A default as JSON-ready builtins (tuples as lists)."""
    if isinstance(value, tuple | list):
        return [_json(v) for v in value]
    return value


def Integer(
    name: str,
    default: int | None,
    minimum: int,
    maximum: int,
    description: str,
    *,
    defaults: Mapping[str, int | None] | None = None,
    variants: Iterable[str] | None = None,
    nullable: bool = False,
) -> Option:
    return Option(
        name, "integer", default, description, defaults=dict(defaults or {}),
        variants=tuple(variants) if variants is not None else None, nullable=nullable,
        bounds={"minimum": minimum, "maximum": maximum},
    )


def Number(
    name: str,
    default: float,
    description: str,
    *,
    above: float,
    maximum: float,
    nullable: bool = False,
) -> Option:
    return Option(
        name, "number", default, description, nullable=nullable,
        bounds={"exclusiveMinimum": above, "maximum": maximum},
    )


def ClockScale(default: float = 1.0, *, nullable: bool = False) -> Option:
    """The `clock_scale` every game has: a number above 0 that multiplies every clock."""
    return Number(
        "clock_scale", default, "every clock is multiplied by this (tests use small values)",
        above=0, maximum=MAX_CLOCK_SCALE, nullable=nullable,
    )


def Boolean(name: str, default: bool, description: str) -> Option:
    return Option(name, "boolean", default, description)


def Custom(
    name: str,
    default: Any,
    description: str,
    *,
    type: str | list[str],
    parse: Callable[[Any, str], Any],
    schema: Mapping[str, Any] | Callable[[str], Mapping[str, Any]] | None = None,
    defaults: Mapping[str, Any] | None = None,
    variants: Iterable[str] | None = None,
    nullable: bool = False,
) -> Option:
    """An option with a grammar of its own (a list of item names, a maze drawing): `parse`
    checks and normalises it. `schema` adds JSON Schema keys (`items`, and `examples`:
    valid values, since a grammar does not fit a schema), or makes them for a variant."""
    return Option(
        name, type, default, description, defaults=dict(defaults or {}),
        variants=tuple(variants) if variants is not None else None, nullable=nullable,
        schema_extra=schema if callable(schema) else dict(schema or {}), parse=parse,
    )


Check = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
"""A check across options: (variant, the checked values) -> OptionsError, or None, or
values to set (an option whose value follows from others, say a maze's form)."""


class OptionTable(Generic[S]):
    """A game's options: one declaration each, for the schema, defaults and validation."""

    def __init__(
        self,
        struct: Callable[..., S],
        variants: Sequence[str],
        options: Sequence[Option],
        *,
        checks: Sequence[Check] = (),
    ) -> None:
        self.struct = struct
        self.variants = tuple(variants)
        self.options = tuple(options)
        self.by_name = {o.name: o for o in self.options}
        self.checks = tuple(checks)
        if set(self.by_name) & _MATCH_OPTION_NAMES:
            # the server takes these out of a match's options before the game sees them
            raise TypeError(f"{sorted(set(self.by_name) & _MATCH_OPTION_NAMES)} are options of every match")
        fields = getattr(struct, "__struct_fields__", None)
        if fields is not None:
            declared = set(self.by_name) | {"variant"}
            if set(fields) != declared:
                raise TypeError(
                    f"the option table and {struct!r} differ: {sorted(set(fields) ^ declared)}"
                )

    def check_variant(self, variant: str) -> None:
        if variant not in self.variants:
            raise OptionsError(
                f"unknown variant {variant!r} (known: {', '.join(self.variants)})"
            )

    def schema(self, variant: str) -> dict[str, Any]:
        """The options a client may set for `variant` (JSON Schema keywords per option)."""
        v = variant if variant in self.variants else self.variants[0]
        return {o.name: o.schema_for(v) for o in self.options if o.applies(v)}

    def defaults(self, variant: str) -> S:
        self.check_variant(variant)
        return self.struct(
            variant=variant, **{o.name: o.default_for(variant) for o in self.options}
        )

    def configure(self, variant: str, options: Any) -> S:
        """Validated options for `variant`; OptionsError names the offending option."""
        self.check_variant(variant)
        if not isinstance(options, Mapping):
            raise OptionsError("options must be an object")
        unknown = sorted(str(k) for k in options if k != "variant" and k not in self.by_name)
        if unknown:
            known = sorted(o.name for o in self.options if o.applies(variant))
            raise OptionsError(
                f"unknown option{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))} (the options of {variant}: {', '.join(known)})"
            )
        if options.get("variant", variant) != variant:
            raise OptionsError(f"option 'variant' is {options.get('variant')!r}, not {variant!r}")
        values: dict[str, Any] = {}
        for option in self.options:
            default = option.default_for(variant)
            value = options.get(option.name, _NOTHING)
            if value is _NOTHING or (value is None and option.nullable):
                values[option.name] = default
                continue
            checked = option.check(value, variant)
            if not option.applies(variant) and checked != default:
                where = ", ".join(option.variants or ())
                raise OptionsError(f"option {option.name!r} applies to {where} only")
            values[option.name] = checked
        for check in self.checks:
            values.update(check(variant, values) or {})
        return self.struct(variant=variant, **values)


# --- options of the match, not of its game ---------------------------------------------------

SPECTATOR_DELAY_PATTERN = (
    r"^(?:[0-9]{1,4}(?:\.[0-9]{1,3})? ?(?:s|seconds?)|[0-9]{1,3} ?(?:r|rounds?))$"
)
_DELAY = re.compile(
    r"(?:(?P<seconds>[0-9]{1,4}(?:\.[0-9]{1,3})?) ?(?:s|seconds?)|(?P<rounds>[0-9]{1,3}) ?(?:r|rounds?))"
)


def _spectator_delay(value: Any, variant: str) -> dict[str, int | float]:
    """'30s', '0.5 seconds', '2 rounds' as {"seconds": 30}, {"seconds": 0.5},
    {"rounds": 2}; no delay (0) as {}."""
    found = _DELAY.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        raise OptionsError(
            "a delay is seconds ('30s', '0.5 seconds', at most 9999.999) or rounds "
            "('2 rounds', '2r', at most 999)"
        )
    if found["rounds"] is not None:
        rounds = int(found["rounds"])
        return {"rounds": rounds} if rounds else {}
    text = found["seconds"]
    seconds: int | float = float(text) if "." in text else int(text)
    return {"seconds": seconds} if seconds else {}


SPECTATOR_DELAY = Custom(
    "spectator_delay", None,
    "spectators see the match this late: seconds ('30s') or rounds ('2 rounds'); "
    "players are not delayed, and the whole match is shown once it is over",
    type="string", nullable=True, parse=_spectator_delay,
    schema={"pattern": SPECTATOR_DELAY_PATTERN, "examples": ["30s", "2 rounds"]},
)
MATCH_OPTIONS: tuple[Option, ...] = (SPECTATOR_DELAY,)
"""Options every match takes, whatever its game: the server records them in the create
entry under their own names (only when set), apart from the game's options, so a game's
recorded options, and every log made before them, stay as they were."""
_MATCH_OPTION_NAMES = frozenset(o.name for o in MATCH_OPTIONS)


def match_options_schema() -> dict[str, Any]:
    """The schema of the options every match takes, whatever its game (GET /games lists
    them as `match_options`, beside each variant's own)."""
    return {o.name: o.schema_for("") for o in MATCH_OPTIONS}


def split_match_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The game's options and the match's own (MATCH_OPTIONS), these checked
    (OptionsError naming the option) and kept only when they are set: what a create
    entry records under their names."""
    game = {k: v for k, v in options.items() if k not in _MATCH_OPTION_NAMES}
    own: dict[str, Any] = {}
    for option in MATCH_OPTIONS:
        value = options.get(option.name)
        if value is not None:
            checked = option.check(value, "")
            if checked:
                own[option.name] = checked
    return game, own

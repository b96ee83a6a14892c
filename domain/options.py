"""Checks every game's match options share: the variant, unknown names, integers in a
range, the clock scale, and clocks in milliseconds. Each raises OptionsError naming the
option and what is wrong with it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from domain.contract import OptionsError


def check_names(
    variant: str, options: Any, variants: Iterable[str], fields: Iterable[str]
) -> Mapping[str, Any]:
    """`options` as a mapping once the variant is known, every name is one of `fields`,
    and a `variant` given among the options (as recorded ones are) agrees."""
    variants = tuple(variants)
    if variant not in variants:
        raise OptionsError(f"unknown variant {variant!r} (known: {', '.join(variants)})")
    if not isinstance(options, Mapping):
        raise OptionsError("options must be an object")
    known = set(fields)
    unknown = sorted(str(k) for k in options if k not in known)
    if unknown:
        raise OptionsError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(sorted(known - {'variant'}))})"
        )
    if options.get("variant", variant) != variant:
        raise OptionsError(f"option 'variant' is {options.get('variant')!r}, not {variant!r}")
    return options


def int_option(options: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = options.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise OptionsError(f"option {key!r} must be an integer")
    if not lo <= value <= hi:
        raise OptionsError(f"option {key!r} must be between {lo} and {hi}")
    return value


def clock_scale(options: Mapping[str, Any], default: float) -> float:
    """The `clock_scale` option: a finite number above 0 that multiplies every clock."""
    scale = options.get("clock_scale", default)
    if not isinstance(scale, int | float) or isinstance(scale, bool):
        raise OptionsError("option 'clock_scale' must be a number")
    scale = float(scale)
    if not math.isfinite(scale) or scale <= 0:
        raise OptionsError("option 'clock_scale' must be a finite number above 0")
    return scale


def clock_ms(seconds: float | None, scale: float, least: int = 1) -> int:
    """A clock of `seconds` (None: 0) times `scale`, in whole milliseconds, at least `least`."""
    return max(least, int((seconds or 0) * 1000 * scale + 0.5))

"""structlog set up for JSON lines on stderr, carrying match id, seat and command id."""

from __future__ import annotations

import logging
import sys

import structlog

# The lowest level logged, as `configure` set it (structlog's default before it: all).
# Read where a line is written per command: a filtered line still costs its call
# through structlog's proxy and its arguments (docs/performance.md).
_least = logging.NOTSET


def configure(level: str = "info", json: bool = True) -> None:
    global _least
    _least = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    processors: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[*processors, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(_least),
        # A line and its newline in one write: `print` writes them apart, and unbuffered
        # (PYTHONUNBUFFERED, as deploy/Dockerfile runs it) two worker processes sharing
        # stderr ran their lines together (tests/test_logs.py).
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def debugging() -> bool:
    """Whether debug lines are written (see `_least`)."""
    return _least <= logging.DEBUG


def get(name: str = "daedalus") -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger

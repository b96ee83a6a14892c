"""Clients of a Daedalus server: the client library, bots and the `daedalus` command."""

from clients.client import (
    CommandResult,
    DaedalusHttp,
    HttpError,
    MatchConnection,
    endpoints,
)

__all__ = ["CommandResult", "DaedalusHttp", "HttpError", "MatchConnection", "endpoints"]

"""A request's line and headers arrive within a time limit, or the connection is closed.

uvicorn's h11 protocol waits for them without one: a connection that sends nothing, or
half a request line, stays open for as long as its client likes (uvicorn's keep-alive
timeout runs only between two requests, and stops at the next request's first byte), and
a few thousand such connections use up the process's file descriptors. Here a connection
is closed when a request's headers are not all in `seconds` after the connection was made
(or handed to this process) or after the request's first byte. Once a request's headers
are in, nothing here times it: its body and its answer are the app's, a websocket's life
the websocket's (Settings.header_timeout; a proxy in front, as deploy/nginx.conf, has
its own limit too).

And an answer its client stops reading: once the transport's buffer is full (the
kernel's socket buffers first), the app's next write waits, without a limit in uvicorn,
and the connection stays open, its task and what it holds with it, for as long as the
client reads nothing (HTTP has no keepalive ping to end it, as a websocket has). Here a
connection whose writing stays paused for `seconds` is aborted (`send_timed`,
Settings.send_timeout; nginx's `send_timeout` is the same idea).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def header_timed(inner: type[H11Protocol], seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol class `inner`, with the time limit on each request's line
    and headers."""

    class HeaderTimed(inner):  # type: ignore[valid-type, misc]
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._header_timer = self.loop.call_later(seconds, self._headers_late)

        def data_received(self, data: bytes) -> None:
            conn = self.conn
            if self._header_timer is None and conn.their_state is h11.IDLE:
                # (the first byte of a request after the one before it was answered)
                self._header_timer = self.loop.call_later(seconds, self._headers_late)
            super().data_received(data)
            timer = self._header_timer
            if timer is not None and conn.their_state is not h11.IDLE:  # its headers are in
                timer.cancel()
                self._header_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    HeaderTimed.__name__ = HeaderTimed.__qualname__ = f"HeaderTimed{inner.__name__}"
    return HeaderTimed


def send_timed(inner: type[H11Protocol], seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol class `inner`, whose connection is aborted when its
    transport stays paused for writing (its buffer full: the client reads nothing)
    for `seconds`."""

    class SendTimed(inner):  # type: ignore[valid-type, misc]
        _send_timer: asyncio.TimerHandle | None = None

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._send_timer is None:
                self._send_timer = self.loop.call_later(seconds, self._send_stalled)

        def resume_writing(self) -> None:
            self._stop_send_timer()
            super().resume_writing()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_send_timer()
            super().connection_lost(exc)

        def _stop_send_timer(self) -> None:
            if self._send_timer is not None:
                self._send_timer.cancel()
                self._send_timer = None

        def _send_stalled(self) -> None:
            self._send_timer = None
            transport = self.transport
            # (a connection upgraded to a websocket since is that protocol's: its pings)
            if not transport.is_closing() and transport.get_protocol() is self:
                transport.abort()

    SendTimed.__name__ = SendTimed.__qualname__ = f"SendTimed{inner.__name__}"
    return SendTimed

"""The game kit: what every game would otherwise write again.

- `options`: match options as one table per game (schema, defaults, validation).
- `rounds`: simultaneous rounds (a pending submission per seat, replaced until the
  deadline, closed when every seat still in play is in or the clock runs out).
- `seats`: small helpers over per-seat tuples.
- `clocks`: clocks in milliseconds from options in seconds.

Everything here is pure, like the rest of `domain/`.
"""

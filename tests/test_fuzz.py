"""A seeded, bounded fuzz of a real server (bench/fuzz.py runs the long one): mutations of
valid frames of every message type and of every game's commands, each of which must be
answered, with no traceback or error in the server's log and the server serving on."""

from __future__ import annotations

from bench import fuzz


async def test_fuzzed_frames_are_all_answered_without_a_traceback() -> None:
    stats = await fuzz.run(frames=3000, seed=14)
    assert stats.problems == [], stats.problems[:10]
    assert stats.line() == "frames=3000 answered=3000 unanswered=0 tracebacks=0 crashes=0"
    # The fuzz reached every part of the protocol: decoding, hellos, commands of every
    # game up to the rules (rejections), acks, pings.
    for code in ("bad_json", "bad_message", "frame_too_large", "welcome", "pong", "ack",
                 "bad_command", "not_ready", "bad_token", "unknown_match"):
        assert stats.codes.get(code, 0) > 0, (code, stats.codes)
    assert sum(stats.codes.values()) == 3000


def test_the_fuzz_starts_from_every_games_commands() -> None:
    from projections.registry import GAMES

    hosted = {name for name, h in GAMES.items() if getattr(h.rules, "__name__", "").startswith("domain.games.")}
    seeds = fuzz.golden_commands()
    assert hosted and set(seeds) >= hosted, "every hosted game (not the tests' toys) has commands to mutate"
    assert all(len(cmds) >= 5 for _variant, cmds in seeds.values())

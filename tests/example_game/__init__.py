"""Odd or Even: the game docs/adding-a-game.md builds, whole, so that what the page shows
is run (tests/conformance/test_example_game.py puts it through every conformance check)."""

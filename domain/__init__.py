"""Pure game logic: no I/O, no clock, no global randomness, no asyncio."""

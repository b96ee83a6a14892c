"""Labyrinth (shared/seeds/labyrinth.txt, section B), hosted by the computer as game master.

The plan, the secret map a game master works from, is `plan.py` (the data model),
`plan_text.py` (the hand-written text format and the JSON form) and `pictures.py` (ASCII
and SVG drawings). `docs/rules/labyrinth.md` documents them.
"""

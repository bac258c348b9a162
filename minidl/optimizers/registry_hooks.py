"""serialize / deserialize of the optimizer registry (optimizers/__init__.py), for the
optimizers that hold others (lookahead.py, loss_scale.py, multi.py, wrapping.py): the
registry imports them, so they reach it through this table, which it fills, rather than by
importing it back (no import cycle)."""

REGISTRY = {}

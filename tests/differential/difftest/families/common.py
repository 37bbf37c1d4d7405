"""Choices every family's generator makes the same way."""

# The share of graphs whose outputs get their strides with set_stride (the rest leave them to
# the implementation's inference and are also run with user-allocated outputs).
EXPLICIT_FRACTION = 0.25


def io_dtype(rng, types=("FLOAT", "HALF", "BFLOAT16"), weights=None):
    return rng.choices(list(types), weights=weights)[0]


def explicit(rng):
    return rng.random() < EXPLICIT_FRACTION


def types(io, intermediate="FLOAT", compute="FLOAT"):
    return {"io": io, "intermediate": intermediate, "compute": compute}


def degenerate_dims(rng, names, at_least=1, at_most=2):
    """A random non-empty subset of ``names`` to force to size 1."""
    k = rng.randint(at_least, min(at_most, len(names)))
    return set(rng.sample(list(names), k))

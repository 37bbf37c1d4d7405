"""Known cuDNN / cudnn-frontend defects: findings they explain are reported as "explained",
with the reason, instead of as mismatches (never silently dropped).

Each entry: family, a predicate over (case params, finding), and the reason with a
reproduction (the run.py line and what was seen). Entries are added only with evidence from
a GPU run; cudnnfe's own bugs are never listed here: they are to be fixed.
"""
from typing import Callable, List, NamedTuple


class Known(NamedTuple):
    family: str
    applies: Callable[[dict, dict], bool]  # (params, finding) -> explained?
    reason: str


KNOWN: List[Known] = []


def explain(family, params, finding):
    """The reason a known defect gives for a finding, or None."""
    for k in KNOWN:
        if k.family == family and k.applies(params, finding):
            return k.reason
    return None

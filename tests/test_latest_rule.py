"""The latest-view rule (``kernel.latest``), which recall's result store and the search
history both decide through: the table of what takes the view from what."""

from __future__ import annotations

import itertools

import pytest

from needle_lib.kernel.latest import Standing, takes_view

EARLY, LATE = "2026-07-01T00:17:00Z", "2026-07-02T00:17:00Z"


def run(*, whole: bool = True, full: bool = True, complete: bool = True,
        started: str = LATE) -> Standing:
    return Standing(whole=whole, full_selection=full, complete=complete, started=started)


CASES = [
    # (why, candidate, holder, takes the view)
    ("a whole run fills an empty view", run(), None, True),
    ("an incomplete run fills an empty view", run(complete=False), None, True),
    ("a narrower run fills an empty view", run(full=False, complete=False), None, True),
    ("a run waiting for shard parts never fills one", run(whole=False), None, False),
    ("a run waiting for parts never takes one", run(whole=False),
     run(full=False, complete=False, started=EARLY), False),
    ("a later incomplete run keeps the complete one", run(complete=False),
     run(started=EARLY), False),
    ("a later narrower run keeps the full one", run(full=False), run(started=EARLY), False),
    ("a later narrower run keeps even an incomplete full one", run(full=False),
     run(complete=False, started=EARLY), False),
    ("an earlier complete run takes it from an incomplete one", run(started=EARLY),
     run(complete=False), True),
    ("an earlier full run takes it from a narrower one", run(complete=False, started=EARLY),
     run(full=False), True),
    ("any whole run takes it from one waiting for parts", run(full=False, complete=False),
     run(whole=False), True),
    ("among equals the newer takes it", run(), run(started=EARLY), True),
    ("among equals the older does not", run(started=EARLY), run(), False),
    ("among incomplete equals the newer takes it", run(complete=False),
     run(complete=False, started=EARLY), True),
    ("the same start goes to the candidate (a run saved again)", run(), run(), True),
    ("a run of unknown start is older than any", run(started="0"), run(started=""), True),
]


@pytest.mark.parametrize(("candidate", "holder", "takes"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_the_rule(candidate: Standing, holder: Standing | None, takes: bool) -> None:
    assert takes_view(candidate, holder) is takes


def test_folding_any_order_of_runs_ends_at_the_same_latest_run() -> None:
    """The rule is an order: a store that saw the runs in any order (concurrent runs, a
    backfill) ends with the one run it ranks first, the newest complete full one."""
    runs = [run(started=EARLY), run(complete=False, started="2026-07-03T00:00:00Z"),
            run(full=False, started="2026-07-04T00:00:00Z"), run(started=LATE),
            run(whole=False, started="2026-07-05T00:00:00Z")]
    for order in itertools.permutations(runs):
        latest = None
        for candidate in order:
            if takes_view(candidate, latest):
                latest = candidate
        assert latest == run(started=LATE)

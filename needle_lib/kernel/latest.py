"""The latest-view rule: which run stands for a recall pair or a search bench.

Every run keeps its own result, and each family shows one of them as *the latest*: recall's
view ``<results>/<pair>.json`` (``recall.store``) and the history's ``latest/<bench>.json``
(``continuous.store``). Readers take that run as the pair's or the bench's result (status,
rescore, compare, the dashboards, the run browser), so the choice is a policy, made here
once for both: each family only says how one of its runs stands (``Standing``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Standing:
    """What the rule weighs of a run, most important first."""

    #: Every part of the run is in: false for a run split over machines (``--shard``) whose
    #: other parts are not published yet.
    whole: bool
    #: The run asked what its pair or bench asks by default (no ``--function``,
    #: ``--sample`` or ``--limit``, the corpus's own scoring policy).
    full_selection: bool
    #: Finished, with every expected case asked and answered.
    complete: bool
    #: When the run started, as text that sorts in time within its family (ISO UTC times,
    #: the result store's run names); "" for a run of unknown start, older than any.
    started: str

    @property
    def rank(self) -> tuple[bool, bool, bool, str]:
        """The fields in the order the rule weighs them (greater stands higher)."""
        return self.whole, self.full_selection, self.complete, self.started


def takes_view(candidate: Standing, holder: Standing | None) -> bool:
    """Whether ``candidate`` becomes the latest run in place of ``holder`` (None: none yet).

    - A run still waiting for shard parts is never the latest: its figures cover some of its
      queries only, and its last part will publish the run whole.
    - A partial or interrupted run never hides a complete one: the latest view is what
      readers compare and gate on, and a ``--sample 3`` run, a ``-k`` subset, a run that
      skipped an engine or one cut short would stand in for the full result otherwise. So a
      run of the full selection beats a narrower one, then a complete run an incomplete one.
      A narrower or incomplete run still fills a view nothing better holds (a run in progress
      is shown so that ``needle status`` can offer to resume it).
    - Among equals the newest, by start: the newest result is the one wanted, and a run that
      finishes late must not displace one started after it. The same start goes to the
      candidate, so a run saved or published again replaces its own earlier version.
    """
    if not candidate.whole:
        return False
    return holder is None or candidate.rank >= holder.rank

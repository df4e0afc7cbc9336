"""The files a search run leaves, found from its report: what the archive keeps per run.

A run directory (``scripts/search-bench.sh``) holds ``search/<report>.json``, the run journal
``search/<report>.partial.jsonl`` while the run is in flight, the query file the run read
(``<bench>.jsonl`` or ``gold/<bench>.jsonl``), the pytest-html report ``<bench>.html`` and
the case detail page its rows link to (``<bench>.cases.html``).
The query file is looked up where the header says it was read, then beside the report and
in its run directory, so a report copied off the runner (a CI artifact) still finds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from needle_lib.benches.runfiles import JOURNAL_SUFFIX, journal_path
from needle_lib.continuous.runs import PublishedRun
from needle_lib.plugin.search.case_page import detail_path


@dataclass(frozen=True)
class RunArtifacts:
    report: Path
    journal: Path | None
    queries: Path | None
    html: Path | None
    detail: Path | None

    @property
    def files(self) -> list[Path]:
        return [p for p in (self.report, self.journal, self.queries, self.html, self.detail)
                if p]


def _first(candidates: list[Path]) -> Path | None:
    return next((p for p in candidates if p.is_file()), None)


def run_artifacts(run: PublishedRun) -> RunArtifacts:
    report = run.source
    header = run.report.get("header") or {}
    given = str((header.get("queries") or {}).get("path") or "")
    run_dir = report.parent.parent
    queries = None
    if given:
        name = Path(given).name
        queries = _first([Path(given), report.parent / name, run_dir / name,
                          run_dir / "gold" / name])
    # a run in flight is published from its journal: that file is the report already
    journal = None if report.name.endswith(JOURNAL_SUFFIX) else _first([journal_path(report)])
    html = _first([run_dir / f"{run.bench}.html", report.parent / f"{run.bench}.html",
                   report.with_suffix(".html")])
    # the page's rows link to their detail by a relative name: archived side by side
    detail = _first([detail_path(html)]) if html else None
    return RunArtifacts(report, journal, queries, html, detail)

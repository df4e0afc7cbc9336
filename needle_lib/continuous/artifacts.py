"""The files a search run leaves, found from its report: what the archive keeps per run.

A run directory (``scripts/search-bench.sh``) holds ``search/<report>.json``, the run journal
``search/<report>.partial.jsonl`` while the run is in flight, the query file the run read
(``<bench>.jsonl`` or ``gold/<bench>.jsonl``), the pytest-html report ``<bench>.html`` and
the case detail page its rows link to (``<bench>.cases.html``).
The query file is looked up by the *name* the header gives, beside the report and in its run
directory (so a report copied off the runner, a CI artifact, still finds it), and is taken
only when its sha256 equals the one the header records. A report is data someone else may
have written: a header whose ``queries.path`` named a credentials file once had that file
uploaded to the archive. So a path out of a report is never opened as it stands (absolute
or climbing out with ``..``), and a file of that name with another digest is an error
naming the report, never archived and never read into the query window.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from needle_lib.benches.queries import file_sha256
from needle_lib.continuous.runs import PublishedRun, ReportError
from needle_lib.kernel.journal import JOURNAL_SUFFIX, journal_path
from needle_lib.report.case_page import detail_path


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
    run_dir = report.parent.parent
    queries = query_file(run)
    # a run in flight is published from its journal: that file is the report already
    journal = None if report.name.endswith(JOURNAL_SUFFIX) else _first([journal_path(report)])
    html = _first([run_dir / f"{run.bench}.html", report.parent / f"{run.bench}.html",
                   report.with_suffix(".html")])
    # the page's rows link to their detail by a relative name: archived side by side
    detail = _first([detail_path(html)]) if html else None
    return RunArtifacts(report, journal, queries, html, detail)


def query_file_name(run: PublishedRun) -> str | None:
    """The base name of the query file the run's header names (any folders dropped)."""
    header = run.report.get("header") or {}
    given = str((header.get("queries") or {}).get("path") or "")
    name = PureWindowsPath(PurePosixPath(given).name).name  # a report may come from Windows
    return name if name not in ("", ".", "..") else None


def query_file(run: PublishedRun) -> Path | None:
    """The query file the run read, found by name beside its report and in its run
    directory, with the sha256 its header records; None when no file of that name is
    there. A file of that name with another digest is a ``ReportError`` naming the report."""
    name = query_file_name(run)
    if name is None:
        return None
    report = run.source
    run_dir = report.parent.parent
    found = list(dict.fromkeys(p for p in (report.parent / name, run_dir / name,
                                           run_dir / "gold" / name) if p.is_file()))
    if not found:
        return None
    header = run.report.get("header") or {}
    expected = str((header.get("queries") or {}).get("sha256") or "")
    digests = {path: file_sha256(path) for path in found}
    for path, digest in digests.items():
        if digest == expected:
            return path
    shown = ", ".join(f"{path} (sha256 {digest[:12]}…)" for path, digest in digests.items())
    recorded = f"{expected[:12]}…" if expected else "missing"
    raise ReportError(
        f"{report}: header.queries.sha256 is {recorded}, but the query "
        f"file named {name!r} found for it does not match: {shown}; refusing to archive or "
        "read it (was the report edited, or the query file replaced after the run?)")

"""Build the dashboard: group runs into cohorts, rank them, and write one page per chart.

A *section* is one cohort (corpus text × scoring policy) and gets its own leaderboard, target
heat map, composition chart and, where runs differ in one knob, paired views. Runs under a
non-default scoring policy therefore never share a leaderboard with default-policy runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import plotly.graph_objects as go
from markupsafe import Markup

from needle_lib.dashboard import charts, site
from needle_lib.dashboard.paired import ComparisonError, compare_runs, one_knob_pairs
from needle_lib.dashboard.positions import SHIPPED_MANIFESTS, NovelSize, load_manifests
from needle_lib.dashboard.runs import Cohort, Run, Scan, scan_results
from needle_lib.dashboard.search_pages import SearchHistory, write_search_pages
from needle_lib.metrics.bootstrap import Interval
from needle_lib.recall.effective_length import RULE, EffectiveLength, describe, effective_lengths
from needle_lib.recall.prompt import PROMPT_VERSION
from needle_lib.recall.score import SCORER_VERSION
from needle_lib.templates import render


@dataclass
class Section:
    """One cohort's runs, ranked, and where its pages live (``slug/…``)."""

    cohort: Cohort
    slug: str
    runs: list[Run]
    pages: dict[str, str] = field(default_factory=dict)
    #: Effective lengths of the models whose novel family includes this corpus.
    lengths: list[EffectiveLength] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.cohort.corpus} · scoring: {self.cohort.policy}"


@dataclass
class BuildReport:
    index: Path
    pages: list[Path]
    notes: list[str]
    sections: list[Section]


def rank(runs: list[Run]) -> list[Run]:
    """Complete valid runs first, then incomplete, then invalid; by matched % within each."""
    def key(run: Run) -> tuple[int, float, str]:
        interval = run.matched_interval
        return run.rank_tier, -(interval.estimate if interval else -1.0), run.label
    return sorted(runs, key=key)


def sections(runs: list[Run]) -> list[Section]:
    """Group runs by cohort; a corpus hash joins the slug only when one corpus has several."""
    by_cohort: dict[Cohort, list[Run]] = defaultdict(list)
    for run in runs:
        by_cohort[run.cohort].append(run)
    hashes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for cohort in by_cohort:
        hashes[cohort.corpus, cohort.policy].add(cohort.sha256)
    result = []
    for cohort in sorted(by_cohort, key=lambda c: (c.corpus, not c.default_policy, c.policy)):
        slug = cohort.corpus
        if not cohort.default_policy:
            slug += "." + cohort.policy.replace(", ", "+")
        if len(hashes[cohort.corpus, cohort.policy]) > 1:
            slug += "." + cohort.sha256[:8]
        result.append(Section(cohort, slug, rank(by_cohort[cohort])))
    return result


def _fmt(interval: Interval | None) -> str:
    if interval is None:
        return "n/a"
    return f"{interval.estimate:.1f} %  [{interval.low:.1f}, {interval.high:.1f}]"


def _leaderboard_table(runs: list[Run]) -> str:
    rows = []
    for position, (run, label) in enumerate(zip(runs, charts.axis_labels(runs), strict=True), 1):
        summary = run.summary
        css = " ".join(c for c in ("incomplete" if run.incomplete else "",
                                   "invalid" if not run.valid else "") if c)
        rows.append((css, [
            site.cell(str(position), numeric=True),
            site.cell(label),
            site.cell(run.status or "ok", css="flag" if run.status else ""),
            site.cell(_fmt(run.matched_interval), numeric=True),
            site.cell(_fmt(run.pass_interval), numeric=True),
            site.cell(f"{len(run.valid_cases)}/{summary['expected']}", numeric=True),
            site.cell(str(summary["errors"]), numeric=True),
            site.cell(run.path.name),
        ]))
    return site.table(["#", "model", "status", "matched % [95 % CI]", "pass rate [95 % CI]",
                       "valid targets", "errors", "dump"], rows)


def effective_length_html(results: Sequence[EffectiveLength]) -> str:
    """A line per model: its effective length, the pass rates it rests on, any note."""
    if not results:
        return ""
    lines = []
    for result in results:
        headline, *details = describe(result)
        lines.append((headline, [line.strip() for line in details]))
    return str(render("dashboard/effective_length.html.j2", rule=RULE, lines=lines))


def _paired_body(section: Section) -> str | None:
    parts = []
    for a, b, knob, (value_a, value_b) in one_knob_pairs(section.runs):
        title = f"{a.label} vs {b.label} — differ only in {knob}: {value_a!r} → {value_b!r}"
        try:
            result = compare_runs(a, b)
        except ComparisonError as exc:
            parts.append(render("dashboard/paired.html.j2", title=title, error=str(exc)))
            continue
        figure = Markup(site.figure_html(charts.paired_figure(result, (a.label, b.label),
                                                               title)))
        parts.append(render("dashboard/paired.html.j2", title=title, error=None, r=result,
                            b_label=b.label, figure=figure))
    return "".join(parts) or None


def _section_pages(section: Section) -> dict[str, tuple[str, Callable[[], str | None]]]:
    """Page file → (title, body builder); a builder returning None means no page."""
    runs, title = section.runs, section.title

    def figure(fig: go.Figure, extra: str = "") -> str:
        return site.figure_html(fig) + extra

    return {
        "leaderboard.html": ("leaderboard", lambda: figure(
            charts.leaderboard_figure(runs, f"Leaderboard — {title}"),
            _leaderboard_table(runs) + effective_length_html(section.lengths))),
        "targets.html": ("targets × models", lambda: figure(
            charts.heatmap_figure(runs, f"Matched % per target — {title}"))),
        "composition.html": ("code vs prose", lambda: figure(
            charts.composition_figure(runs, f"Composition — {title}"))),
        "paired.html": ("paired", lambda: _paired_body(section)),
    }


def _depth_pages(found: list[Section], manifest: dict[str, NovelSize],
                 notes: list[str],
                 lengths: Sequence[EffectiveLength] = ()) -> dict[str, tuple[str, str]]:
    """One long-context page per scoring policy: a depth × size heat map per model and
    flavour (a Python and a TypeScript corpus of one size hold different targets)."""
    models: dict[str, dict[tuple[str, str], dict[str, Run]]] = defaultdict(
        lambda: defaultdict(dict))
    for section in found:
        size = manifest.get(section.cohort.corpus)
        if size is None:
            continue
        if section.cohort.sha256 != size.sha256:
            notes.append(f"{section.slug}: corpus sha256 differs from the novel manifest's; "
                         "left out of the depth map")
            continue
        for run in section.runs:
            models[section.cohort.policy][run.model_key, size.flavour].setdefault(
                size.corpus, run)
    pages = {}
    for policy, by_model in sorted(models.items()):
        body = []
        for (model, flavour), runs_by_size in sorted(by_model.items(), key=lambda kv: kv[0]):
            sizes = sorted((manifest[c] for c in runs_by_size), key=lambda s: s.context_tokens)
            runs = [runs_by_size[s.corpus] for s in sizes]
            body.append(effective_length_html([
                r for r in lengths
                if (r.model, r.family, r.policy) == (model, flavour, policy)]))
            body.append(site.figure_html(charts.depth_figure(
                runs, sizes, f"{runs[0].label} · {flavour} — matched % by depth and "
                "context length")))
        pages[f"long-context/{policy.replace(', ', '+')}.html"] = (
            f"Long context · scoring: {policy}", "".join(body))
    return pages


@dataclass(frozen=True)
class _IndexRow:
    corpus: str
    policy: str
    sha256: str
    runs: int
    flagged: str
    #: (href, text) of each chart page
    pages: list[tuple[str, str]]


def _index_body(found: list[Section], depth: dict[str, tuple[str, str]],
                notes: list[str]) -> str:
    rows = [_IndexRow(
        section.cohort.corpus, section.cohort.policy, section.cohort.sha256[:12],
        len(section.runs),
        "; ".join(label for run, label in
                  zip(section.runs, charts.axis_labels(section.runs), strict=True)
                  if run.status),
        [(f"{section.slug}/{page}", text) for page, text in section.pages.items()])
        for section in found]
    return str(render("dashboard/recall_index.html.j2", sections=rows,
                      depth=[(href, title) for href, (title, _) in depth.items()],
                      notes=notes, prompt_version=PROMPT_VERSION,
                      scorer_version=SCORER_VERSION))


def build_dashboard(results: Path | None, out: Path, *,
                    manifests: Sequence[Path] = SHIPPED_MANIFESTS,
                    search: SearchHistory | None = None) -> BuildReport:
    """Read every dump in ``results`` (None: no recall pages) and write the dashboard under
    ``out``; ``search`` adds the search pages (a history directory or published reports)."""
    scan = scan_results(results) if results is not None else Scan()
    notes = list(scan.notes)
    found = sections(scan.runs)
    lengths = effective_lengths(run.dump for run in scan.runs)
    for section in found:
        section.lengths = [r for r in lengths if r.policy == section.cohort.policy
                           and section.cohort.corpus in {s.corpus for s in r.sizes}]
    site.clear_pages(out)
    out.mkdir(parents=True, exist_ok=True)
    site.write_plotly_js(out)
    pages = []
    for section in found:
        built = {}
        for page, (text, make) in _section_pages(section).items():
            body = make()
            if body is not None:
                built[page] = (text, body)
        section.pages = {page: text for page, (text, _) in built.items()}
        nav = [(f"{section.slug}/{page}", text) for page, text in section.pages.items()]
        for page, (text, body) in built.items():
            pages.append(site.write_page(out, f"{section.slug}/{page}",
                                         f"{section.title} — {text}", body, nav))
    novel = load_manifests(manifests)
    depth = _depth_pages(found, novel, notes, lengths)
    for href, (title, body) in depth.items():
        pages.append(site.write_page(out, href, title, body))
    body = _index_body(found, depth, notes) if results is not None else ""
    if search is not None:
        built_search = write_search_pages(search.site, out, search.source, search.config)
        pages.extend(built_search.pages)
        body += built_search.index_section
    title = "Needle dashboard" if search is not None else "Needle recall dashboard"
    index = site.write_page(out, site.INDEX, title, body)
    return BuildReport(index, [index, *pages], notes, found)

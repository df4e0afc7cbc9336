"""`needle dashboard` over real dumps: ``pytest evals`` against the reference model and
loopback fake servers, then pages checked as files and in headless Chromium."""

from __future__ import annotations

import copy
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from browser import chromium, run_chromium
from evalrun import record_runs

from needle_lib.cli import main
from needle_lib.contract.schema import SchemaError
from needle_lib.dashboard import charts
from needle_lib.dashboard.build import build_dashboard, rank
from needle_lib.dashboard.paired import one_knob_pairs
from needle_lib.dashboard.positions import load_manifest, load_manifests
from needle_lib.dashboard.runs import load_run, parse_run, scan_results
from needle_lib.jsonio import write_json_atomic
from needle_lib.recall.results import finalize


def truncated(source: Path, target: Path, keep: int) -> None:
    """What a run killed after ``keep`` cases leaves behind: an in-progress dump."""
    dump = json.loads(source.read_text(encoding="utf-8"))
    dump["cases"] = dump["cases"][:keep]
    write_json_atomic(target, finalize(dump, in_progress=True))


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    results = tmp_path_factory.mktemp("results")
    sample = ("--sample", "4")
    record_runs(results, [
        (None, "reference", ["http_server", "novel_16k", "novel_64k"]),
        ("wrong", "qwen-4bit", ["http_server"], *sample),
        ("perfect", "qwen-8bit", ["http_server"], *sample),
        ("html", "flaky", ["http_server"], *sample, "--max-consecutive-errors", "0"),
        ("reindent", "relaxed", ["http_server"], *sample, "--relax-indent"),
        (None, "reference", ["novel_ts_16k", "novel_ts_64k"], *sample),
    ])
    truncated(results / "http_server__qwen-8bit.json", results / "http_server__cut-8bit.json", 2)
    stale = json.loads((results / "http_server__reference.json").read_text(encoding="utf-8"))
    stale["prompt_version"] = "needle-recall-0"
    write_json_atomic(results / "http_server__old.json", stale)
    (results / "http_server__broken.json").write_text('{"benchmark": "recall",\n  oops',
                                                      encoding="utf-8")
    return results


@pytest.fixture(scope="module")
def built(results, tmp_path_factory):
    out = tmp_path_factory.mktemp("dashboard")
    return out, build_dashboard(results, out)


def section(report, slug):
    return next(s for s in report.sections if s.slug == slug)


def test_stale_and_unreadable_dumps_are_left_out_with_a_note(built):
    _, report = built
    notes = "\n".join(report.notes)
    assert "stale" in notes and "http_server__old.json" in notes
    assert "needle-recall-0" in notes
    assert re.search(r"http_server__broken\.json: invalid JSON at line 2 column 3", notes)
    charted = {run.path.name for s in report.sections for run in s.runs}
    assert not charted & {"http_server__old.json", "http_server__broken.json"}


def test_non_default_scoring_is_its_own_cohort(built):
    _, report = built
    default = section(report, "http_server")
    relaxed = section(report, "http_server.relax-indent")
    assert [r.model_key for r in relaxed.runs] == ["relaxed"]
    assert "relaxed" not in {r.model_key for r in default.runs}
    assert default.cohort.policy == "default" and relaxed.cohort.policy == "relax-indent"


def test_ranking_puts_incomplete_then_invalid_runs_last(built):
    _, report = built
    runs = section(report, "http_server").runs
    # Ties (100 %) break by label; the truncated copy of qwen-8bit ranks after every full run.
    assert [r.path.stem.split("__")[1] for r in runs] == [
        "reference", "qwen-8bit", "qwen-4bit", "cut-8bit", "flaky"]
    cut, flaky = runs[-2], runs[-1]
    assert cut.incomplete and cut.valid and cut.status == "⚠ INCOMPLETE"
    # Its preflight failed: one error, the pair's other cases skipped naming it.
    assert flaky.incomplete and not flaky.valid
    assert flaky.status == "⚠ INCOMPLETE ✗ INVALID (1 error(s))"
    assert [r.rank_tier for r in runs] == [0, 0, 0, 1, 2]


def test_leaderboard_is_in_percent_with_bootstrap_intervals(built):
    _, report = built
    runs = section(report, "http_server").runs
    by_key = {r.model_key: r for r in runs}
    assert by_key["qwen-8bit"].matched_interval.estimate == 100.0
    assert by_key["qwen-4bit"].pass_interval.high == 0.0
    assert by_key["flaky"].matched_interval is None  # no valid case: nothing to estimate
    fig = charts.leaderboard_figure(runs, "t")
    matched, passed = fig.data
    assert list(matched.x[:3]) == [r.matched_interval.estimate for r in runs[:3]]
    assert matched.error_x.array is not None and passed.error_x.arrayminus is not None
    assert max(matched.x) <= 100  # percentages, never line counts
    outline = dict(zip(matched.y, matched.marker.line.color, strict=True))
    assert outline["qwen-8bit (http_server__cut-8bit) ⚠ INCOMPLETE"] == charts.ALERT
    assert outline["qwen-8bit (http_server__qwen-8bit)"] != charts.ALERT


def test_leaderboard_labels_sit_right_of_their_error_bars_in_a_readable_size(built):
    _, report = built
    runs = section(report, "http_server").runs
    fig = charts.leaderboard_figure(runs, "t")
    for trace, axis in zip(fig.data, ("x", "x2"), strict=True):
        ends = {label: x + plus for label, x, plus
                in zip(trace.y, trace.x, trace.error_x.array, strict=True)}
        labels = [a for a in fig.layout.annotations if a.xref == axis]
        assert sorted(a.y for a in labels) == sorted(trace.y)  # one value label per bar
        for label in labels:
            # never under the upper whisker, never shrunk to fit a short bar
            assert label.x > ends[label.y] and label.xanchor == "left"
            assert label.font.size >= 12
        assert trace.text is None  # no copy inside the bar, where a whisker crosses it
        assert max(a.x for a in labels) < fig.layout[axis.replace("x", "xaxis")].range[1] - 10
    # one run alone gets a bar a person can read, not a 12-pixel sliver
    alone = charts.leaderboard_figure(runs[:1], "t")
    plot_px = alone.layout.height - alone.layout.margin.t - alone.layout.margin.b
    assert plot_px * (1 - alone.layout.bargap) >= 30


def test_pages_flag_incomplete_and_invalid_runs(built):
    out, _ = built
    leaderboard = (out / "http_server" / "leaderboard.html").read_text(encoding="utf-8")
    assert "⚠ INCOMPLETE" in leaderboard and "✗ INVALID" in leaderboard
    assert '<tr class="incomplete">' in leaderboard
    assert '<tr class="incomplete invalid">' in leaderboard
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "⚠ INCOMPLETE" in index and "INVALID" in index


def test_every_page_is_offline_utf8_and_links_back(built):
    out, report = built
    pages = sorted(out.rglob("*.html"))
    assert set(pages) == set(report.pages)
    assert (out / "plotly.min.js").stat().st_size > 1_000_000
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert '<meta charset="utf-8">' in html
        assert not re.search(r"<script[^>]+src=[\"']?(https?:)?//", html), page
        scripts = re.findall(r'<script src="([^"]+)"', html)
        assert scripts == ["../" * (len(page.relative_to(out).parts) - 1) + "plotly.min.js"]
        assert (page.parent / scripts[0]).resolve() == (out / "plotly.min.js").resolve()
        if page.name != "index.html":
            assert 'href="../index.html">← index</a>' in html


def test_section_pages_cover_every_chart(built):
    out, _ = built
    assert {p.name for p in (out / "http_server").iterdir()} == {
        "leaderboard.html", "targets.html", "composition.html", "paired.html"}
    targets = (out / "http_server" / "targets.html").read_text(encoding="utf-8")
    assert "parse_request" in targets


def test_one_knob_pair_is_shown_side_by_side(built):
    out, report = built
    pairs = one_knob_pairs(section(report, "http_server").runs)
    assert {(a.model_key, b.model_key, knob) for a, b, knob, _ in pairs} >= {
        ("qwen-4bit", "qwen-8bit", "model")}
    assert all(knob != "model" or a.model_key.split("-")[0] == b.model_key.split("-")[0]
               for a, b, knob, _ in pairs)  # reference vs qwen-* is not a controlled pair
    paired = (out / "http_server" / "paired.html").read_text(encoding="utf-8")
    assert "qwen-4bit vs qwen-8bit — differ only in model" in paired
    assert "4 win(s), 0 loss(es), 0 tie(s) for qwen-8bit" in paired


def test_depth_map_places_targets_by_manifest_position(built):
    out, report = built
    page = out / "long-context" / "default.html"
    assert page in report.pages
    runs = [r for s in report.sections for r in s.runs
            if s.cohort.corpus in ("novel_16k", "novel_64k")]
    manifest = load_manifest()
    sizes = [manifest[r.corpus] for r in runs]
    fig = charts.depth_figure(runs, sizes, "reference")
    heat = fig.data[0]
    # columns are labelled with the context the runs really used, as the server counted it
    assert [r.corpus for r in runs] == ["novel_16k", "novel_64k"]
    assert list(heat.x) == [f"{r.corpus} · {r.measured_prompt_tokens / 1000:.1f}K tokens"
                            for r in runs]
    for run, size in zip(runs, sizes, strict=True):
        assert 0.98 * size.prompt_tokens <= run.measured_prompt_tokens <= size.prompt_tokens
    filled = [row for row in heat.z if any(v is not None for v in row)]
    assert filled and all(v == 100.0 for row in filled for v in row)
    depths = {round(p * 10) for p in manifest["novel_16k"].positions.values()}
    assert len(filled) >= len(depths) - 1  # targets spread down the whole context


def test_each_flavour_gets_its_own_depth_map(built):
    out, report = built
    page = (out / "long-context" / "default.html").read_text(encoding="utf-8")
    titles = [json.loads(f'"{text}"')
              for text in re.findall(r'"title":\{"text":"((?:[^"\\]|\\.)*)"', page)]
    maps = [t.split(" — ")[0] for t in titles if "matched % by depth" in t]
    assert maps == ["Reference (oracle) · python", "Reference (oracle) · typescript"]
    manifest = load_manifests()
    assert manifest["novel_ts_16k"].flavour == "typescript"
    assert manifest["novel_16k"].flavour == "python"
    ts_runs = [r for s in report.sections for r in s.runs if s.cohort.corpus.startswith("novel_ts")]
    assert sorted(r.corpus for r in ts_runs) == ["novel_ts_16k", "novel_ts_64k"]
    fig = charts.depth_figure(ts_runs, [manifest[r.corpus] for r in ts_runs], "ts")
    filled = [v for row in fig.data[0].z for v in row if v is not None]
    assert len(filled) >= 4 and all(v == 100.0 for v in filled)  # the sampled targets, placed


def test_depth_map_falls_back_to_the_manifest_estimate_without_usage(results):
    dump = json.loads((results / "novel_16k__reference.json").read_text(encoding="utf-8"))
    for case in dump["cases"]:
        case["usage"] = None  # a server that reports no usage
    run = parse_run(Path("novel_16k__quiet.json"), dump)
    size = load_manifest()["novel_16k"]
    assert run.measured_prompt_tokens is None
    label = charts.context_label(run, size)
    assert label == f"novel_16k · ≈{size.prompt_tokens / 1000:.1f}K tokens (qwen3.6)"


def test_rebuilding_into_the_same_directory_drops_pages_of_gone_corpora(results, tmp_path):
    out = tmp_path / "dashboard"
    build_dashboard(results, out)
    assert (out / "novel_64k" / "leaderboard.html").exists()
    (out / "notes.html").write_text("<p>mine</p>", encoding="utf-8")  # not Needle's page
    only_http = tmp_path / "results"
    only_http.mkdir()
    for dump in results.glob("http_server__*.json"):
        (only_http / dump.name).write_bytes(dump.read_bytes())
    assert main(["dashboard", "--results", str(only_http), "--out", str(out)]) == 0
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
    assert not [page for page in left if page.startswith(("novel", "long-context"))], left
    assert "http_server/leaderboard.html" in left and "notes.html" in left
    assert not (out / "novel_64k").exists()


def test_malformed_dump_error_names_file_and_case(results, tmp_path):
    dump = json.loads((results / "http_server__qwen-8bit.json").read_text(encoding="utf-8"))
    bad = copy.deepcopy(dump)
    del bad["cases"][1]["matched"]
    with pytest.raises(SchemaError, match=r"x\.json: Object missing required field `matched` - "
                                          r"at `\$\.cases\[1\]` \(case '\w+'\)"):
        parse_run(Path("x.json"), bad)
    bad = copy.deepcopy(dump)
    bad["cases"][0]["outcome"] = "exploded"
    with pytest.raises(SchemaError,
                       match=r"Invalid value 'exploded' - at `\$\.cases\[0\]\.outcome`"):
        parse_run(Path("x.json"), bad)
    search = tmp_path / "search.json"
    search.write_text('{"benchmark": "news", "engines": {}}', encoding="utf-8")
    with pytest.raises(SchemaError, match="not a recall dump"):
        load_run(search)
    assert scan_results(tmp_path).notes == []  # other benchmarks' dumps are not noise


def test_rank_orders_by_matched_percent_within_a_tier(results):
    runs = [load_run(results / f"http_server__{m}.json") for m in ("qwen-4bit", "qwen-8bit")]
    assert [r.model_key for r in rank(runs)] == ["qwen-8bit", "qwen-4bit"]


def test_cli_builds_and_prints_notes(results, tmp_path, capsys):
    assert main(["dashboard", "--results", str(results), "--out", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "note: stale, left out (re-run it): http_server__old.json" in out
    assert (tmp_path / "d" / "index.html").exists() and "→" in out
    assert main(["dashboard", "--results", str(tmp_path / "missing")]) == 2


def test_pages_render_offline_in_chromium(built, tmp_path):
    chromium()  # skips, saying so, where Chromium is not installed
    out, _ = built
    pages = {tmp_path / "index.png": out / "index.html",
             tmp_path / "chart.png": out / "http_server" / "leaderboard.html"}
    with ThreadPoolExecutor(len(pages)) as pool:  # separate profiles, so browsers run in parallel
        doms = list(pool.map(lambda item: run_chromium(
            item[1], tmp_path / item[0].stem, f"--screenshot={item[0]}", "--dump-dom",
            "--virtual-time-budget=3000", "--window-size=1280,900"), pages.items()))
    for png, page in pages.items():
        assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.stat().st_size > 20_000, f"{page} rendered (nearly) blank"
    assert "Needle recall dashboard" in doms[0]
    assert 'class="main-svg"' in doms[1]  # Plotly drew the chart from the bundled script

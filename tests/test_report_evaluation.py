"""The report's evaluation summary, its environment table and the templates behind them,
rendered in-process (the browser checks are in test_report_html.py)."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest
from jinja2 import UndefinedError

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.report import JudgedEngine, JudgedReport, Latency
from needle_lib.redact import MASK
from needle_lib.report.environment import (
    RunSubject,
    drop_runner_metadata,
    needle_environment,
    public_url,
    run_title,
)
from needle_lib.report.evaluation import SHOWN_PROBLEMS, SettledCases, evaluation_html
from needle_lib.report.html import diff_html, search_case_html
from needle_lib.templates import environment, render

XSS = "<img src=x onerror=alert(1)>"


def _dump(*, matched_pct: float | None = 35.37, errors: int = 0,
          valid: bool = True) -> dict:
    return {"corpus": {"name": "http_server"}, "model": {"key": "m"}, "valid": valid,
            "complete": True,
            "summary": {"cases": 10, "passed": 2, "failed": 8 - errors, "errors": errors,
                        "skipped": 0, "matched_pct": matched_pct,
                        "pass_rate": None if matched_pct is None else 20.0,
                        "hallucinated": 3, "reindented": 0, "bonus": 0, "prompt_tokens": {}}}


def _search_report(**judge: str) -> JudgedReport:
    """A judged run's summary, as the controller hands it to the report."""
    header = {"bench": "news", "engines": ["exa"], "num_results": 5,
              "judge": {"model": "judge-model", "prompt_version": "needs-met-v3", **judge}}
    return JudgedReport(
        benchmark="news", in_progress=False, num_queries=2, k=5, header=header,
        complete=True, scored_cases=2, num_results=5, judged_pairs=10, judge_requests=10,
        engines={name: JudgedEngine(mean_ndcg=ndcg, num_scored=2, search_errors=0,
                                    judge_errors=0, skipped=0, retries=0,
                                    latency=Latency(n=0, mean=None, p50=None, p95=None),
                                    per_query=[])
                 for name, ndcg in (("exa", 0.5), ("ultimate", 1.0))},
        overlap=[], unique_urls={})


def test_every_template_escapes_what_it_is_given():
    env = environment()
    names = env.list_templates(extensions=["j2"])  # not the package's __pycache__
    assert {"report/evaluation.html.j2", "report/diff.html.j2"} <= set(names)
    for name in names:
        assert env.get_template(name).environment.autoescape is True
    html = render("report/case_section.html.j2", anchor="case-1", test_id=XSS,
                  outcome="failed", why=[("error", XSS)], detail=XSS)
    assert "<img" not in html and html.count("&lt;img") == 3


def test_a_misspelt_field_is_an_error_not_an_empty_cell():
    with pytest.raises(UndefinedError, match="anchor"):
        render("report/case_section.html.j2", test_id="t", outcome="failed", why=[],
               detail="")


def test_the_templates_ship_in_the_package():
    shipped = files("needle_lib") / "templates" / "report" / "evaluation.html.j2"
    assert shipped.is_file()


def test_the_summary_names_the_pair_counts_its_cases_and_says_why_each_failed():
    settled = SettledCases()
    for n in range(SHOWN_PROBLEMS + 3):
        settled.note("http_server__m", f"evals/test_recall.py::test_recall[f{n}-{XSS}]",
                     Outcome.FAILED, f"matched 0/4 lines {XSS}")
    settled.note("http_server__m", "t", Outcome.ERROR, "HTTP 500 from the server")
    settled.note("http_server__m", "t", Outcome.SKIPPED, "fail-fast")
    html = evaluation_html([("http_server__m", _dump())], [], settled)
    text = re.sub(r"<[^>]+>", "", html)
    assert "m on http_server: 2 passed · 8 failed · 0 errors · 0 skipped" in text
    assert "matched 35.4% · pass rate 20.0%" in text
    assert html.count('class="needle-outcome-failed"') == SHOWN_PROBLEMS  # the first ten, …
    assert "… and 4 more failed or errored case(s)" in text  # … then a count
    assert "SKIPPED 1 case(s): fail-fast" in text
    assert "<img" not in html and "&lt;img src=x" in html  # ids and reasons are text
    assert "test_recall[f0-" in text and "evals/test_recall.py::" not in text


def test_a_figure_that_does_not_exist_is_a_dash_as_in_the_terminal():
    html = evaluation_html([("p", _dump(matched_pct=None, errors=8, valid=False))], [],
                           SettledCases())
    cells = re.findall(r"<td>([^<]*)</td>", html)
    assert "None" not in html
    assert cells[8:10] == ["—", "—"]  # matched, pass rate
    assert "INVALID (8 error(s))" in html and "needle-status-bad" in html


def test_a_search_bench_shows_its_engines_judge_table_and_the_rating_legend():
    settled = SettledCases()
    settled.note("news__q", "test_news[q-exa]", Outcome.FAILED,
                 "exa on 'q': ratings [1] (best 1; relevant means ≥ 3)", "r.cases.html#case-1")
    html = evaluation_html([], [("news__q", _search_report())], settled)
    text = re.sub(r"<[^>]+>", "", html)
    assert "exa on 2 news queries, judged by judge-model (needs-met-v3): 0 passed · 1 failed" \
        in text
    assert '<a href="r.cases.html#case-1">detail</a>' in html
    assert "3 HM highly meets" in text and "≥ 3" in text
    assert "Diff lines" not in text  # no recall case: no diff legend
    assert re.findall(r"<td>([^<]*)</td>", html)[:2] == ["exa", "0.500"]


def test_diff_and_search_case_fragments_keep_untrusted_text_inert():
    case = {"function": XSS, "passed": False, "ratio": 0.0, "matched": 0, "scored": 1,
            "hallucinated": 1, "reindented": 0, "bonus": 0,
            "composition": {"code": {"matched": 0, "total": 1},
                            "prose": {"matched": 0, "total": 0}, "blank_skipped": 0}}
    diff = diff_html(case, [["hallucinated", XSS], ["reindented", "  x"]])
    assert "<img" not in diff and diff.count("&lt;img") == 2
    assert "~   x (reindented)</span>" in diff
    search = search_case_html({"engine": "exa", "query": XSS, "search_error": None,
                               "results": [{"url": f"javascript:{XSS}", "title": XSS,
                                            "snippet": XSS, "rating": 0, "label": "FailsM",
                                            "reasoning": XSS}]})
    assert "<img" not in search and "href" not in search  # a script URL is text


def test_the_environment_is_the_evaluations_and_its_values_are_escaped():
    subject = RunSubject(
        models=[(f"m{XSS}", "m", "http://user:pw@127.0.0.1:9/v1?api_key=sk-LEAK", "raw"),
                ("reference", "reference", "builtin:reference", "builtin")],
        corpora=[{"name": "c", "files": ["fixtures/http_server.py"], "lines": 1319,
                  "tokens": 11218, "sha256": "d4" * 32}],
        engines=["exa"], queries=("q.txt", 2, None), judge=("judge-model", "needs-met-v3"))
    env = needle_environment(subject, {"name": "needle-evals", "version": "0.1.0",
                                       "git_revision": "abc123"})
    assert list(env) == ["Model", "Corpus", "Engines", "Queries", "Judge", "Needle", "Commit"]
    assert env["Needle"] == "needle-evals 0.1.0" and env["Commit"] == "abc123"
    assert "<img" not in env["Model"] and "&lt;img" in env["Model"]
    assert "sk-LEAK" not in env["Model"] and "pw" not in env["Model"]
    assert "built-in reference model" in env["Model"] and "<br>" in env["Model"]
    assert "CPython standard library" in env["Corpus"] and "(PSF-2.0)" in env["Corpus"]
    metadata = {"Python": "3", "Packages": {"pytest": "9"}, "Plugins": {}, "CI": "yes",
                "Platform": "linux"}
    drop_runner_metadata(metadata)
    assert metadata == {"CI": "yes"}


def test_a_url_in_a_report_keeps_no_credentials():
    assert public_url("https://u:secret@host.example:8443/v1?key=abc&x=1") == \
        f"https://{MASK}@host.example:8443/v1?key={MASK}&x=1"
    assert public_url("http://127.0.0.1:8401") == "http://127.0.0.1:8401"


def test_the_title_names_what_ran_and_when():
    from datetime import UTC, datetime

    started = datetime(2026, 7, 2, 14, 25, tzinfo=UTC)
    assert run_title([("jquery", "a"), ("jquery", "b"), ("http_server", "a")],
                     [("news", ["exa", "brave"])], started) == \
        "Needle · jquery, http_server × a, b · news × exa, brave · 2026-07-02 14:25 UTC"

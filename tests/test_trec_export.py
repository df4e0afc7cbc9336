"""`needle export trec`: real reports written as TREC files, read back by ir_measures, whose
nDCG@5, Success@5 and RR@5 must equal Needle's own figures on the queries Needle scored.

How the two nDCGs differ, and how the export bridges it (docs/matching.md says the same):
- gains: trec_eval and ir_measures use the qrel value as the gain; Needle's Needs Met gains
  (4→1.0, 3→0.667, 2→0.117) are passed as ``gains`` (scaled to integers for pytrec_eval);
- redundancy penalty: Needle rates a repeated page 0 at its rank; the export writes the
  repeat as a docno no qrel names (``<docno>#repeat-2``), so it gains 0 there too;
- pooled ideal: trec's ideal is every qrel of the query sorted by gain; the qrels are the
  pool of every engine's judged pages, so that is Needle's ``ultimate`` ranking;
- which queries count: Needle leaves out a query whose pool has no relevant page (trec
  scores it 0) and an engine's failed search (trec cannot tell it from an empty list): the
  manifest lists the queries Needle scored.
"""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest
from search_runs import START, finance_run, header, judged_case, write_report

from needle_lib.benches.runfiles import read_run
from needle_lib.benches.trec import build_export, trec_qid
from needle_lib.cli import main
from needle_lib.metrics.ndcg import GAINS
from needle_lib.metrics.urls import normalize_url

IR_GAINS = {rating: round(g * 1000) for rating, g in GAINS.items()}
NDCG5 = ir_measures.nDCG(gains=IR_GAINS) @ 5


def judged_cases() -> list[dict]:
    """Three engines, four queries: a repeated page, a failed search, an empty list, a query
    nobody found anything relevant for, and a query id with a space. Each page is rated the
    same wherever it appears (one snippet per page), as the judge's cache rates it."""
    u = "https://pages.example/{}".format
    return [
        judged_case("q1", "first", "exa", [4, 2, 4], urls=[u("a"), u("b"), u("a")]),
        judged_case("q1", "first", "brave", [3, 4, 0], urls=[u("c"), u("a"), u("d")]),
        judged_case("q1", "first", "tavily", [], search_error="HTTP 503"),
        judged_case("q 2", "second", "exa", [0, 2], urls=[u("e"), u("f")]),
        judged_case("q 2", "second", "brave", [3], urls=[u("g")]),
        judged_case("q 2", "second", "tavily", [], urls=[]),
        judged_case("q3", "third", "exa", [1, 0], urls=[u("h"), u("i")]),
        judged_case("q3", "third", "brave", [1], urls=[u("h")]),
        judged_case("q3", "third", "tavily", [0], urls=[u("j")]),
        judged_case("q4", "fourth", "exa", [2, 3, 4, 1, 0],
                    urls=[u("k"), u("l"), u("m"), u("n"), u("o")]),
        judged_case("q4", "fourth", "brave", [4, 4], urls=[u("m"), u("p")]),
        judged_case("q4", "fourth", "tavily", [3, 2], urls=[u("l"), u("k")]),
    ]


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("judged")
    report = write_report(root, header("news", "judged", ["exa", "brave", "tavily"], 4, START),
                          judged_cases(), START)
    out = root / "trec"
    assert main(["export", "trec", str(report), "--out", str(out)]) == 0
    return report, out


def per_query(measure, qrels_path: Path, run_path: Path) -> dict[str, float]:
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


def test_one_qrel_per_judged_pair(judged) -> None:
    report_path, out = judged
    report = json.loads(report_path.read_text(encoding="utf-8"))
    qrels = list(ir_measures.read_trec_qrels(str(out / "qrels.txt")))
    pairs = {(trec_qid(c["query_id"]), normalize_url(r["url"])): r["rating"]
             for c in report["cases"] for r in c["results"] if r["rating"] is not None}
    assert len(qrels) == len(pairs) == report["judged_pairs"] == 16
    assert {(q.query_id, q.doc_id): q.relevance for q in qrels} == pairs
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["qrels"]["count"] == 16 and manifest["qrels"]["conflicting_ratings"] == 0


def test_ndcg_at_5_matches_ir_measures_on_the_queries_needle_scored(judged) -> None:
    report_path, out = judged
    report = json.loads(report_path.read_text(encoding="utf-8"))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    compared = 0
    for engine in ("exa", "brave", "tavily"):
        theirs = per_query(NDCG5, out / "qrels.txt", out / f"{engine}.run")
        ours = {trec_qid(row["query_id"]): row["ndcg"]
                for row in report["engines"][engine]["per_query"]}
        scored = manifest["engines"][engine]["scored_queries"]
        assert scored == [qid for qid, score in ours.items() if score is not None]
        for qid in scored:
            # a query absent from the run (an empty list) is 0, as trec_eval -c scores it
            assert theirs.get(qid, 0.0) == pytest.approx(ours[qid], abs=1e-9), (engine, qid)
            compared += 1
        mean = sum(theirs.get(qid, 0.0) for qid in scored) / len(scored)
        assert mean == pytest.approx(report["engines"][engine]["mean_ndcg"], abs=1e-9)
    assert compared == 8  # q3 (nothing relevant) and tavily's failed q1 are left out


def test_repeat_gains_nothing_at_its_rank_and_dropping_it_would_score_higher(judged) -> None:
    _, out = judged
    lines = (out / "exa.run").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["q1 Q0 pages.example/a 1 3 exa", "q1 Q0 pages.example/b 2 2 exa",
                         "q1 Q0 pages.example/a#repeat-2 3 1 exa"]
    # Plain TREC (a run cannot hold a page twice, so the repeat is simply dropped) gives the
    # same here only because the repeat is last; move it up and Needle's penalty shows.
    qrels = list(ir_measures.read_trec_qrels(str(out / "qrels.txt")))
    penalised = [ir_measures.ScoredDoc("q1", d, s) for d, s in
                 (("pages.example/a", 3.0), ("pages.example/a#repeat-2", 2.0),
                  ("pages.example/b", 1.0))]
    dropped = [doc for doc in penalised if "#" not in doc.doc_id]
    assert ir_measures.calc_aggregate([NDCG5], qrels, penalised)[NDCG5] < \
        ir_measures.calc_aggregate([NDCG5], qrels, dropped)[NDCG5]


def test_unscored_cases_say_why(judged) -> None:
    _, out = judged
    engines = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["engines"]
    assert engines["tavily"]["unscored"] == [
        {"qid": "q1", "reason": "search failed: HTTP 503"},
        {"qid": "q3", "reason": "no engine found a relevant result (ideal DCG 0)"}]
    # the failed search and the empty list have no line; the id with a space is escaped
    tavily = (out / "tavily.run").read_text(encoding="utf-8").splitlines()
    assert [line.split()[0] for line in tavily] == ["q3", "q4", "q4"]
    assert "q%202 Q0 pages.example/e 1 2 exa" in (out / "exa.run").read_text(encoding="utf-8")
    assert engines["exa"]["repeats"] == 1 and engines["brave"]["repeats"] == 0


def test_known_item_export_matches_recall_and_mrr(tmp_path) -> None:
    report_path = finance_run(tmp_path, START, seed=3, queries=8)
    out = tmp_path / "trec"
    assert main(["export", "trec", str(report_path), "--out", str(out)]) == 0
    report = json.loads(report_path.read_text(encoding="utf-8"))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    qrels = list(ir_measures.read_trec_qrels(str(out / "qrels.txt")))
    assert len(qrels) == sum(len(c["results"]) for c in report["cases"])
    assert {q.relevance for q in qrels} == {0, 1}
    for engine in ("exa", "keenable"):
        scored = manifest["engines"][engine]["scored_queries"]
        success = per_query(ir_measures.Success @ 5, out / "qrels.txt", out / f"{engine}.run")
        rr = per_query(ir_measures.RR @ 5, out / "qrels.txt", out / f"{engine}.run")
        summary = report["engines"][engine]
        assert sum(success[q] for q in scored) / len(scored) == pytest.approx(
            summary["recall_at_k"])
        assert sum(rr[q] for q in scored) / len(scored) == pytest.approx(summary["mrr_at_k"])


def test_a_differently_spelled_repeat_is_one_page() -> None:
    head = header("news", "judged", ["exa"], 1, START)
    cases = [judged_case("q", "q", "exa", [4, 4],
                         urls=["https://www.x.com/a/", "http://x.com/a?utm_source=feed"])]
    export = build_export(Path("r.json"), (head, cases))
    assert [line.docno for line in export.runs["exa"]] == ["x.com/a", "x.com/a#repeat-2"]
    assert [(q.docno, q.relevance) for q in export.qrels] == [("x.com/a", 4)]


def test_a_repeat_rated_higher_raises_the_pool_as_in_needles_ideal() -> None:
    head = header("news", "judged", ["exa"], 1, START)
    cases = [judged_case("q", "q", "exa", [2, 4], urls=["https://x.com/a", "https://x.com/a/"])]
    export = build_export(Path("r.json"), (head, cases))
    assert [(q.docno, q.relevance) for q in export.qrels] == [("x.com/a", 4)]
    assert export.manifest.qrels.conflicting_ratings == 1


def test_conflicting_ratings_keep_the_best_and_are_counted() -> None:
    head = header("news", "judged", ["exa", "brave"], 1, START)
    cases = [judged_case("q", "q", "exa", [1], urls=["https://x.com/a"]),
             judged_case("q", "q", "brave", [3], urls=["https://x.com/a"])]
    export = build_export(Path("r.json"), (head, cases))
    assert [(q.docno, q.relevance) for q in export.qrels] == [("x.com/a", 3)]
    assert export.manifest.qrels.conflicting_ratings == 1


def test_qids_are_one_token_and_distinct() -> None:
    assert trec_qid("q-1") == "q-1"
    assert trec_qid("q 1") == "q%201" != trec_qid("q%201") == "q%25201"
    assert trec_qid("a\tb\u00a0c") == "a%09b%C2%A0c"


def test_refuses_a_directory_holding_files(judged, capsys) -> None:
    report, out = judged
    assert main(["export", "trec", str(report), "--out", str(out)]) == 2
    assert f"{out}: not an empty directory" in capsys.readouterr().err


def test_engine_name_that_cannot_name_a_file_is_named(tmp_path, capsys) -> None:
    head = header("news", "judged", ["../x"], 1, START)
    report = write_report(tmp_path, head, [judged_case("q", "q", "../x", [4])], START)
    assert main(["export", "trec", str(report), "--out", str(tmp_path / "o")]) == 2
    assert "case 'q': engine name '../x' is not a plain name" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_file_that_is_not_a_report_is_named(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"header": {"bench": "news"}, "cases": []}', encoding="utf-8")
    assert main(["export", "trec", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert str(bad) in capsys.readouterr().err


def test_journal_of_a_run_in_flight_exports_too(judged, tmp_path) -> None:
    report, _ = judged
    head, cases = read_run(report)
    journal = tmp_path / "run.partial.jsonl"
    journal.write_text("".join(json.dumps(entry) + "\n" for entry in
                               [{"header": head}, *({"case": c} for c in cases)]),
                       encoding="utf-8")
    assert main(["export", "trec", str(journal), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "qrels.txt").read_text(encoding="utf-8").count("\n") == 16

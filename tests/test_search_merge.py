"""`needle merge` on search reports: parts split by engine or by query recompute the pooled
figures exactly as one run would; other setups, overlaps and gaps are named; a killed run's
journal becomes a report."""

from __future__ import annotations

import io
import json

import pytest

from needle_lib.benches.runfiles import SearchJournal, assemble_report, finish_run, read_run
from needle_lib.cli import main
from needle_lib.contract.report import report_fields
from needle_lib.jsonio import write_json_in_pieces
from needle_lib.kernel.journal import journal_path

ENGINES = ["exa", "brave"]


def header(engines=ENGINES, **extra):
    return {"bench": "finance", "kind": "known_item",
            "queries": {"path": "/a/gold.jsonl", "sha256": "abc", "count": 3},
            "engines": engines, "num_results": 3, "snippet_chars": 2000, "judged": False,
            "judge": None, "sampling": {"sample": None, "seed": 0, "limit": None},
            "package": {"version": "0.1.0"}, "expected_cases": 3 * len(engines), **extra}


def case(qid, engine, hit):
    return {"query_id": qid, "query": f"q {qid}", "engine": engine, "gold": {},
            "groups": {"field": "ceo"}, "hit_rank": hit, "det_rank": hit, "judged": 0,
            "judge_errors": 0, "search_error": None, "latency_s": 0.1, "retries": 0,
            "outcome": "passed" if hit else "failed",
            "results": [{"url": f"https://{engine}.example/{qid}", "title": "t", "snippet": "",
                         "det_match": bool(hit), "judge_match": None}]}


CASES = [case("q1", "exa", 1), case("q1", "brave", None), case("q2", "exa", None),
         case("q2", "brave", 1), case("q3", "exa", None), case("q3", "brave", None)]


def write(path, head, cases):
    finish_run(path, head, cases)
    return path


def whole_report() -> dict:
    """The report of every case in one run, as its file holds it."""
    return report_fields(assemble_report(header(), CASES))


def merged(tmp_path, *parts, expect=0):
    out = tmp_path / "merged.json"
    assert main(["merge", *map(str, parts), "--out", str(out)]) == expect
    return json.loads(out.read_text())


def test_parts_split_by_engine_merge_into_the_single_run_report(tmp_path):
    exa = write(tmp_path / "exa.json", header(["exa"]), [c for c in CASES if c["engine"] == "exa"])
    brave = write(tmp_path / "brave.json", header(["brave"]),
                  [c for c in CASES if c["engine"] == "brave"])
    report = merged(tmp_path, exa, brave)
    whole = whole_report()
    assert report["engines"] == whole["engines"]
    assert report["engines"]["exa"]["misses_system_specific"] == 1  # q2: only brave hit
    assert report["engines"]["ultimate"]["recall_at_k"] == pytest.approx(2 / 3)
    assert report["complete"] is True and report["header"]["engines"] == ENGINES


def test_parts_split_by_query_merge_too(tmp_path, capsys):
    a = write(tmp_path / "a.json", header(), CASES[:4])
    b = write(tmp_path / "b.json", header(), CASES[4:])
    assert merged(tmp_path, a, b)["engines"] == whole_report()["engines"]
    assert "6 of 6 cases (finance, 2 engines)" in capsys.readouterr().out


def test_missing_cases_are_named_and_exit_1(tmp_path, capsys):
    a = write(tmp_path / "a.json", header(), CASES[:4])
    report = merged(tmp_path, a, expect=1)
    assert report["complete"] is False
    err = capsys.readouterr().err
    assert "missing: exa: 1 of 3 queries in no part" in err


def test_other_setups_and_overlaps_are_refused(tmp_path, capsys):
    a = write(tmp_path / "a.json", header(), CASES[:4])
    other = write(tmp_path / "other.json", header(num_results=10), CASES[4:])
    assert main(["merge", str(a), str(other), "--out", str(tmp_path / "m.json")]) == 2
    assert "num_results: 3 (a.json) vs 10 (other.json)" in capsys.readouterr().err
    twice = write(tmp_path / "twice.json", header(), CASES[3:])
    assert main(["merge", str(a), str(twice), "--out", str(tmp_path / "m.json")]) == 2
    assert "case q2 on brave is in both a.json and twice.json" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_a_killed_runs_journal_becomes_a_report(tmp_path):
    journal = SearchJournal(journal_path(tmp_path / "run.json"), header())
    for c in CASES[:5]:
        journal.append(c)
    journal.close(remove=False)
    with journal.path.open("a") as fh:
        fh.write('{"case": {"query_id": "q3", "eng')  # the case in flight when killed
    report = merged(tmp_path, journal.path, expect=1)
    assert report["engines"]["exa"]["num_scored"] == 3
    assert report["engines"]["brave"]["num_scored"] == 2


def test_a_finished_journal_is_the_report_and_goes_away(tmp_path):
    """The controller keeps no case in memory: the report is read back from the journal,
    later lines of the same case win, and the journal goes once the report is written."""
    path = tmp_path / "run.json"
    journal = SearchJournal(journal_path(path), header())
    journal.append({**CASES[0], "outcome": "error"})  # settled again at teardown, below
    for c in CASES:
        journal.append(c)
    report = report_fields(journal.finish(path, complete_run=True))
    assert report == json.loads(path.read_text(encoding="utf-8"))
    assert report == whole_report()
    assert not journal.path.exists()


def test_a_journal_read_back_holds_each_key_and_short_value_once(tmp_path):
    """A journal is a JSON document per line, and json shares keys only within a document:
    read back, 20,000 cases held their results' keys and gate verdicts once per case. The
    reader shares them across lines; long text (snippets, queries) stays per case."""
    journal = SearchJournal(journal_path(tmp_path / "run.json"), header())
    for c in CASES:
        journal.append(c)
    journal.close(remove=False)
    _, cases = read_run(journal.path)
    assert cases == CASES
    first, second = cases[0]["results"][0], cases[2]["results"][0]
    for key in ("url", "title", "det_match"):
        (mine,) = [k for k in first if k == key]
        (theirs,) = [k for k in second if k == key]
        assert mine is theirs
    assert first["title"] is second["title"]  # "t": a short value
    assert cases[0]["engine"] is cases[2]["engine"]
    assert first["url"] is not cases[1]["results"][0]["url"]  # different text


def test_a_snippet_with_a_unicode_line_separator_stays_one_journal_line(tmp_path):
    """Journal lines end at "\\n" only: a snippet may hold U+2028 or U+0085, which
    ``str.splitlines`` also splits at (and the journal then read as broken JSON)."""
    odd = {**CASES[0], "results": [{**CASES[0]["results"][0],
                                    "snippet": "before\u2028between\x85after"}]}
    journal = SearchJournal(journal_path(tmp_path / "run.json"), header())
    for c in [odd, *CASES[1:]]:
        journal.append(c)
    journal.close(remove=False)
    report = merged(tmp_path, journal.path)
    assert report["cases"][0]["results"][0]["snippet"] == "before\u2028between\x85after"


def test_a_report_has_a_line_per_case(tmp_path):
    """A 20,000-case report is written value by value with json's C encoder (``indent``
    switches to the pure-Python one, seconds per run): a line per case still diffs."""
    path = write(tmp_path / "run.json", header(), CASES)
    lines = path.read_text(encoding="utf-8").splitlines()
    for c in CASES:
        assert f"  {json.dumps(c, ensure_ascii=False)}," in lines or \
            f"  {json.dumps(c, ensure_ascii=False)}" in lines
    assert json.loads(path.read_text(encoding="utf-8")) == whole_report()


class Writes(io.StringIO):
    """A text file that remembers its largest single write."""

    largest = 0

    def write(self, text: str) -> int:
        self.largest = max(self.largest, len(text))
        return super().write(text)


def test_a_reports_tables_are_written_in_pieces_as_the_same_text(tmp_path):
    """The per-engine tables are as large as the cases: written an item at a time, never
    as one string, and byte for byte what json.dumps writes (a float key, an empty object,
    a line separator and an accent included)."""
    report = report_fields(assemble_report(header(), CASES * 20))
    odd = {"a": [], "b": {}, "c": [1, {"d": "é\u2028"}], "n": {1.5: 2}, "e": [[], [{}], "x"]}
    for value in (report["engines"], report, odd, [], "text", None):
        out = Writes()
        write_json_in_pieces(out, value)
        assert out.getvalue() == json.dumps(value, ensure_ascii=False)
    out = Writes()
    write_json_in_pieces(out, report["engines"])
    assert out.largest * 10 < len(out.getvalue())
    path = write(tmp_path / "run.json", header(), CASES)
    engines = json.dumps(whole_report()["engines"], ensure_ascii=False)
    assert f'"engines": {engines},' in path.read_text(encoding="utf-8").splitlines()


def test_parts_split_by_engine_keep_each_engines_mode(tmp_path, capsys):
    """A part of exa alone records no mode; the merged run keeps tavily's from its part,
    so it never reads back as the default; parts of one engine in two modes are refused."""
    tavily = [{**c, "engine": "tavily"} for c in CASES if c["engine"] == "brave"]
    exa = write(tmp_path / "exa.json", header(["exa"]), [c for c in CASES if c["engine"] == "exa"])
    deep = write(tmp_path / "tavily.json",
                 header(["tavily"], engine_modes={"tavily": "advanced"}), tavily)
    report = merged(tmp_path, exa, deep)
    assert report["header"]["engine_modes"] == {"tavily": "advanced"}
    assert report["engine_modes"] == {"tavily": "advanced"}  # the header's, at the top too
    basic = write(tmp_path / "a.json", header(["tavily"]), tavily[:2])  # before modes: basic
    fast = write(tmp_path / "b.json", header(["tavily"], engine_modes={"tavily": "fast"}),
                 tavily[2:])
    assert main(["merge", str(basic), str(fast), "--out", str(tmp_path / "m.json")]) == 2
    assert "engine_modes.tavily: 'basic' (a.json) vs 'fast' (b.json)" in capsys.readouterr().err

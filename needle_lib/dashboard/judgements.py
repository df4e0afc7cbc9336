"""The judgement browser: every query of a run, each engine's results as judged.

Why it is built from script chunks: a 20,000-case run is tens of megabytes of results, and
one DOM holding them all is unusable. A run's data is split into an index (query text and
each engine's verdict, enough to search and filter) and chunks of ``CHUNK`` queries with
the results, titles, snippets and reasons. The page shows ``PAGE`` queries at a time and
loads only the chunks that page needs. Chunks are ``<script>`` files calling a loader,
not JSON fetched with XHR: browsers refuse ``fetch`` on ``file://``, and the site must work
opened from disk.

Text from engines and the judge is untrusted: the browser inserts it with ``textContent``
and links only ``http(s)`` URLs; the JSON inside the scripts escapes ``<`` so no string can
close its script element.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from markupsafe import Markup

from needle_lib.contract.history import RunEntry
from needle_lib.contract.records import SearchResultRecord
from needle_lib.contract.report import JudgedQueryRow, KnownItemQueryRow
from needle_lib.jsonio import JSON
from needle_lib.metrics.ndcg import ULTIMATE
from needle_lib.templates import render

CHUNK = 100
PAGE = 25
SCRIPT = "browser.js"


def _js(value: Any) -> str:
    """JSON safe inside a script element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace(
        "<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def gold_words(gold: JSON, text: str | None = None) -> str:
    """The gold as a sentence: the bench's own description (``text``), else its fields in
    words (a gold is the bench's own shape, ``KnownItemBench.read_gold``)."""
    if text:
        return text
    if isinstance(gold, dict):
        return "; ".join(f"{key.replace('_', ' ')}: {_words(value)}" for key, value in
                         gold.items() if value not in (None, "", [], {}))
    return "" if gold is None else _words(gold)


def _words(value: JSON) -> str:
    if isinstance(value, list):
        return ", ".join(_words(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {_words(v)}" for k, v in value.items())
    return str(value)


#: A per-query row of the run browser's report copy, as its bench kind writes it.
QueryRow = JudgedQueryRow | KnownItemQueryRow


def _results(row: QueryRow) -> list[SearchResultRecord]:
    """A real engine's ranked results (only the pooled ``ultimate``, left out of the
    browser, ranks bare ``RankedRating``s)."""
    return cast(list[SearchResultRecord], row.get("results", []))


def _gold(kind: str, row: QueryRow) -> str:
    """A known-item row's gold in words; a judged row has none."""
    if kind == "judged":
        return ""
    known = cast(KnownItemQueryRow, row)
    return gold_words(known.get("gold"), known.get("gold_text"))  # older rows may lack them


def _judged_verdict(row: JudgedQueryRow) -> tuple[str, int]:
    """(label shown, best): the highest rating (−1 none)."""
    ratings = [r for r in (x.get("rating") for x in _results(row)) if r is not None]
    ndcg = row.get("ndcg")
    label = "not scored" if ndcg is None else f"nDCG {ndcg:.3f}"
    return label, max(ratings, default=-1)


def _known_item_verdict(row: KnownItemQueryRow) -> tuple[str, int]:
    """(label shown, best): 1 for a hit."""
    hit = row.get("hit_rank")
    return (f"hit at {hit}", 1) if hit else ("miss", 0)


def _verdict(kind: str, row: QueryRow) -> tuple[str, int]:
    """(label shown, best) — best: judged = highest rating (−1 none), known-item = 1 hit."""
    if row.get("search_error"):
        return "search error", -2
    if kind == "judged":
        return _judged_verdict(cast(JudgedQueryRow, row))
    return _known_item_verdict(cast(KnownItemQueryRow, row))


def _result(kind: str, result: SearchResultRecord) -> list[str | int | None]:
    if kind == "judged":
        rating = result.get("rating")
        verdict = "judge error" if rating is None else f"{rating} {result.get('label') or ''}"
        reason = result.get("reasoning") or result.get("judge_error") or ""
        gates = result.get("gates") or {}
        if gates:
            reason += " · gates: " + ", ".join(f"{k} {v}" for k, v in gates.items())
        return [result.get("title") or "", result.get("url") or "", result.get("snippet") or "",
                verdict.strip(), reason, rating]
    judge = result.get("judge_match")
    verdict = ("match" if result.get("det_match") else "judge: match" if judge
               else "no match")
    reason = result.get("match_why") or ""
    if judge is not None:
        reason += f" · backstop judge: {judge}"
    return [result.get("title") or "", result.get("url") or "", result.get("snippet") or "",
            verdict, reason, 1 if result.get("det_match") or judge else 0]


def run_key(entry: RunEntry) -> str:
    return f"{entry.bench}/{entry.run_id}"


def write_run_data(folder: Path, entry: RunEntry) -> int:
    """Write ``index.js`` and ``chunk-N.js`` for one kept run; returns the query count."""
    report = entry.report
    kind = report["kind"]
    by_query: dict[str, dict[str, QueryRow]] = {}
    for engine, summary in report["engines"].items():
        if engine == ULTIMATE:
            continue
        for row in summary["per_query"]:
            by_query.setdefault(row["query_id"], {})[engine] = row
    key = run_key(entry)
    index, chunk, number = [], [], 0
    folder.mkdir(parents=True, exist_ok=True)
    for position, (query_id, engines) in enumerate(by_query.items()):
        first = next(iter(engines.values()))
        verdicts = {e: _verdict(kind, r) for e, r in engines.items()}
        index.append([query_id, first["query"], {e: v[1] for e, v in verdicts.items()}])
        chunk.append([query_id, _gold(kind, first), {
            e: [verdicts[e][0], str(r.get("search_error") or ""),
                [_result(kind, x) for x in _results(r)]] for e, r in engines.items()}])
        if len(chunk) == CHUNK or position == len(by_query) - 1:
            (folder / f"chunk-{number}.js").write_text(
                f"needleChunk({_js(key)},{number},{_js(chunk)});\n", encoding="utf-8")
            chunk, number = [], number + 1
    header = report.get("header") or {}
    meta = {"key": key, "bench": entry.bench, "run_id": entry.run_id, "ts": entry.ts,
            "kind": kind, "chunk": CHUNK, "page": PAGE,
            "engines": [e for e in report["engines"] if e != ULTIMATE],
            "k": header.get("num_results"), "queries": index}
    (folder / "index.js").write_text(f"needleRun({_js(meta)});\n", encoding="utf-8")
    return len(index)


def browser_html(up: str, runs: list[tuple[str, str]]) -> str:
    """The browser's mount point; ``runs`` are (run key, folder of its data, relative to
    the page); ``up`` leads from the page to the ``search/`` folder."""
    return str(render("dashboard/browser.html.j2", up=up, script=SCRIPT,
                      folders=[folder for _, folder in runs],
                      bases=Markup(_js({key: folder for key, folder in runs}))))


#: The browser itself (plain JavaScript, no library), shipped beside this module.
BROWSER_JS = Path(__file__).with_name("browser.js")


def write_browser_script(search_dir: Path) -> Path:
    path = search_dir / SCRIPT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BROWSER_JS.read_text(encoding="utf-8"), encoding="utf-8")
    return path

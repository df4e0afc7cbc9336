"""The search site builds from a year of history in seconds (not a test).

Generates a year of daily runs of five benches (news and agentic_rare judged; finance,
scholar and legal known-item) × 14 engines as real run reports, publishes them into one
history directory with ``needle publish``'s own code, then times ``needle dashboard
--site`` over it: loading ``history/`` and writing every page (standings, price, latency,
independence, methodology, the judgement browser's data for the kept runs, a permalink per
run, exports). Target: under 10 s. Only the build is timed; generating and publishing the
year is set-up.

Run: ``uv run python benchmarks/site_build.py [DAYS [QUERIES [HISTORY_DIR]]]`` (default 365
days, 10 queries per run; a HISTORY_DIR that exists is reused instead of generated, so a
profile of the build need not wait for the year to be generated again).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from search_runs import START, header, judged_case, known_case, write_report  # noqa: E402

from needle_lib.continuous.runs import load_run  # noqa: E402
from needle_lib.continuous.store import Site, publish  # noqa: E402
from needle_lib.dashboard.build import build_dashboard  # noqa: E402
from needle_lib.dashboard.search_pages import SearchHistory  # noqa: E402

ENGINES = ("keenable-realtime", "keenable", "exa-instant", "exa", "google", "bing", "brave",
           "parallel-turbo", "parallel", "tavily", "perplexity", "octen", "ceramic", "you")
BENCHES = {"news": "judged", "agentic_rare": "judged", "finance": "known_item",
           "scholar": "known_item", "legal": "known_item"}
TARGET_S = 10.0


def one_run(directory: Path, bench: str, kind: str, day: int, queries: int) -> Path:
    rng = random.Random(f"{bench}-{day}")
    started = START + timedelta(days=day, hours=list(BENCHES).index(bench) * 4)
    quality = {e: 0.3 + 0.5 * i / len(ENGINES) for i, e in enumerate(ENGINES)}
    cases = []
    for q in range(queries):
        qid, text = f"{bench[0]}{day}-{q}", f"{bench} question {q} of day {day}"
        shared = f"https://shared.example/{bench}/{day}/{q}"
        for engine in ENGINES:
            urls = [shared] + [f"https://{engine}.example/{qid}/{i}" for i in range(1, 5)]
            if kind == "judged":
                ratings = [4 if rng.random() < quality[engine] else rng.choice([0, 1, 2])
                           for _ in urls]
                cases.append(judged_case(qid, text, engine, ratings, urls=urls,
                                         latency=0.2 + rng.random() * 2))
            else:
                hit = rng.choice([1, 2, 3]) if rng.random() < quality[engine] else None
                cases.append(known_case(qid, text, engine, hit, urls=urls[:3],
                                        latency=0.2 + rng.random() * 2))
    head = {**header(bench, kind, list(ENGINES), queries, started), "bench": bench}
    return write_report(directory, head, cases, started)


def main() -> None:
    days = int(sys.argv[1]) if len(sys.argv) > 1 else 365
    queries = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    kept = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    with tempfile.TemporaryDirectory(prefix="needle-site-bench-") as name:
        tmp = Path(name)
        history = kept or tmp / "history"
        began = time.monotonic()
        if not (history / "history.jsonl").exists():
            runs = [load_run(one_run(tmp / "reports", bench, kind, day, queries))
                    for day in range(days) for bench, kind in BENCHES.items()]
            publish(runs, history)
        prepared = time.monotonic() - began
        began, cpu = time.monotonic(), time.process_time()
        search = SearchHistory(Site.load(history, window_only=True), str(history))
        report = build_dashboard(None, tmp / "site", search=search)
        took, cpu = time.monotonic() - began, time.process_time() - cpu
        count = len({(r.bench, r.run_id) for r in search.site.history})
    verdict = "within" if took < TARGET_S else "OVER"
    print(f"search site from history/: {count} runs ({days} days × {len(BENCHES)} benches "
          f"× {len(ENGINES)} engines, {queries} queries each) → {len(report.pages)} files in "
          f"{took:.1f} s wall, {cpu:.1f} s CPU ({verdict} the {TARGET_S:.0f} s target; on a "
          f"shared machine CPU time is the steadier figure; generating and publishing "
          f"the year took {prepared:.0f} s)")


if __name__ == "__main__":
    main()

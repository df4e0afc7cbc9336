"""Which schema library for the kernel's records: plain json, pydantic v2 or msgspec (not a test).

Issue 33 makes every record a model of one schema library, validated at every boundary.
This measures the candidates on the search journal of a 20,000-case run (10,000 queries ×
2 engines, news-style judged cases with five rated results each, as ``evals -k news``
writes them; a few cases errored, judge-failed or skipped), all in one run, and prints each
figure as a ratio to today's code:

  1. encode: a case in memory → its journal line (today: ``json.dumps(case,
     ensure_ascii=False)`` of a dict, as ``LiveReport.append``; pydantic:
     ``model_dump_json()`` of a model; msgspec: ``Encoder.encode`` of a Struct);
  2. decode + validate: the journal file → (header, cases), every case checked (today:
     ``runfiles.read_run``, which was json with shared strings plus the hand validator
     ``check_run`` when this was measured and is msgspec since (``contract.schema``: run
     the commit before it for the old figure); pydantic: ``model_validate_json`` per
     line; msgspec: a typed ``Decoder`` per line); ``json.loads`` alone, checking
     nothing, is shown for scale;
  3. peak memory reading that journal back and holding its cases (tracemalloc, in this
     process) and the peak RSS growth of a fresh process doing the same (``--rss``);
  4. the error each gives for one bad field, and the installed size of each library.

Times are the best of ``--repeat`` (default 3) passes; memory is one pass.

Run: ``uv run --with pydantic --with msgspec python benchmarks/schema_libs.py``
(the candidates are installed into this run only; they are not dependencies of Needle).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
import pydantic  # noqa: E402

from needle_lib.benches.runfiles import read_run  # noqa: E402
from needle_lib.contract.outcome import Outcome  # noqa: E402
from needle_lib.tomlconf import ConfigError  # noqa: E402

CASES = 20_000
ENGINES = ("exa", "brave")
GATES = ("integrity", "freshness", "staleness", "domain", "operators")
WORDS = ("market", "election", "storm", "league", "court", "ruling", "quarter", "earnings",
         "minister", "vaccine", "launch", "orbit", "strike", "union", "tariff", "summit",
         "the", "of", "and", "in", "to", "a", "for", "on", "with", "after", "über", "café")
LABELS = {0: "FailsM", 1: "SlightlyM", 2: "MM", 3: "HM", 4: "FullyM"}


# --- the journal, as today's run writes it ---------------------------------------------

def header() -> dict[str, Any]:
    return {"bench": "news", "kind": "judged",
            "queries": {"path": "results/queries/news.txt", "sha256": "9" * 64,
                        "count": CASES // len(ENGINES)},
            "engines": list(ENGINES), "num_results": 5, "snippet_chars": 2000, "judged": True,
            "judge": {"model": "gpt-4.1-mini", "prompt_version": "needs-met-v2",
                      "concurrency": 8},
            "sampling": {"sample": None, "seed": 0, "limit": None},
            "package": {"name": "needle-evals", "version": "0.1.0", "git_revision": "d" * 40},
            "expected_cases": CASES, "started_at": "2026-12-04T20:43:50+00:00"}


def text(rng: random.Random, low: int, high: int) -> str:
    """Words up to a length in [low, high] characters (snippets: a search engine's excerpt)."""
    target, parts, size = rng.randint(low, high), [], 0
    while size < target:
        word = rng.choice(WORDS)
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


def make_case(rng: random.Random, number: int, engine: str) -> dict[str, Any]:
    """One case with the fields and key order of a news run's journal line."""
    query = f"{text(rng, 30, 90)} {number}"
    roll = rng.random()
    results: list[dict[str, Any]] = []
    search_error = None
    judge_errors = 0
    outcome = Outcome.PASSED
    extra: dict[str, Any] = {}
    if roll < 0.01:  # an engine without its key: skipped, never asked
        outcome = Outcome.SKIPPED
        extra["skip_reason"] = f"{engine}: set {engine.upper()}_API_KEY to run it"
    elif roll < 0.03:  # the search failed: ERROR
        outcome, search_error = Outcome.ERROR, "HTTP 502 from api.example: bad gateway"
        extra["error"] = search_error
    else:
        for rank in range(5):
            domain = f"www.example{rng.randint(1, 400)}.com"
            url = f"https://{domain}/{number}/story-{rank}/"
            rating = rng.choice((0, 1, 2, 3, 3, 4, 4))
            result = {"url": url, "title": text(rng, 30, 110), "snippet": text(rng, 150, 1200),
                      "published_date": "2026-11-29T00:00:00.000Z" if rng.random() < 0.8
                      else None,
                      "rating": rating, "label": LABELS[rating], "reasoning": text(rng, 40, 200),
                      "gates": {gate: rng.choice(("pass", "pass", "n/a")) for gate in GATES}}
            results.append(result)
        if roll < 0.04:  # one result the judge could not rate
            judge_errors = 1
        best = max(r["rating"] for r in results)
        outcome = Outcome.PASSED if best >= 3 else Outcome.FAILED
        ratings = [r["rating"] for r in results]
        extra["verdict"] = (f"{engine} on {query[:40]!r}: ratings {ratings} "
                            f"(best {best}; relevant means ≥ 3)")
    case: dict[str, Any] = {
        "query_id": f"{number:012x}", "query": query, "stratum": None, "engine": engine,
        "results": results, "search_error": search_error, "judge_errors": judge_errors,
        "judge_requests": len(results) + 1, "latency_s": round(rng.uniform(0.2, 2.5), 4),
        "retries": rng.choice((0, 0, 0, 1)), "outcome": outcome, "malformed_results": 0,
        "query_profile": {"query_type": "specific", "query_domain": "news", "operators": [],
                          "main_aspects": [query[:40]], "aux_aspects": [],
                          "content_archetype": "ephemeral"}}
    case.update(extra)
    return case


def make_cases(count: int = CASES) -> list[dict[str, Any]]:
    rng = random.Random(33)
    return [make_case(rng, index // len(ENGINES), ENGINES[index % len(ENGINES)])
            for index in range(count)]


def write_journal(path: Path, cases: list[dict[str, Any]]) -> None:
    """As ``runfiles.Journal`` writes it: a header line, then ``{"case": …}`` per case."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"header": header()}, ensure_ascii=False) + "\n")
        for case in cases:
            fh.write('{"case": ' + json.dumps(case, ensure_ascii=False) + "}\n")


# --- the candidates' models of the same records ------------------------------------------
# Field docs: pydantic reads the docstring under a field (use_attribute_docstrings);
# msgspec takes Meta(description=…) (shown on one field; both feed their JSON Schema).

class PGates(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", use_attribute_docstrings=True)
    integrity: str
    freshness: str
    staleness: str
    domain: str
    operators: str


class PResult(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", use_attribute_docstrings=True)
    url: str
    title: str
    snippet: str
    published_date: str | None
    rating: int
    """The judge's rating, 0 (fails to meet) … 4 (fully meets)."""
    label: str
    reasoning: str
    gates: PGates


class PProfile(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    query_type: str
    query_domain: str
    operators: list[str]
    main_aspects: list[str]
    aux_aspects: list[str]
    content_archetype: str


class PCase(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", use_attribute_docstrings=True)
    query_id: str
    query: str
    stratum: str | None
    engine: str
    results: list[PResult]
    search_error: str | None
    judge_errors: int
    judge_requests: int
    latency_s: float | None
    retries: int
    outcome: Outcome | None
    """Set once per case by ``contract.outcome``."""
    malformed_results: int = 0
    query_profile: PProfile | None = None
    verdict: str | None = None
    skip_reason: str | None = None
    error: str | None = None
    resumed: bool = False


class PLine(pydantic.BaseModel):
    """A journal line: the header or one case (a file from today's version reads as is)."""
    header: dict[str, Any] | None = None
    case: PCase | None = None


class MGates(msgspec.Struct, forbid_unknown_fields=True):
    integrity: str
    freshness: str
    staleness: str
    domain: str
    operators: str


class MResult(msgspec.Struct, forbid_unknown_fields=True):
    url: str
    title: str
    snippet: str
    published_date: str | None
    rating: Annotated[int, msgspec.Meta(
        description="The judge's rating, 0 (fails to meet) … 4 (fully meets).")]
    label: str
    reasoning: str
    gates: MGates


class MProfile(msgspec.Struct, forbid_unknown_fields=True):
    query_type: str
    query_domain: str
    operators: list[str]
    main_aspects: list[str]
    aux_aspects: list[str]
    content_archetype: str


class MCase(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    query_id: str
    query: str
    stratum: str | None
    engine: str
    results: list[MResult]
    search_error: str | None
    judge_errors: int
    judge_requests: int
    latency_s: float | None
    retries: int
    outcome: Outcome | None
    malformed_results: int = 0
    query_profile: MProfile | None = None
    verdict: str | None = None
    skip_reason: str | None = None
    error: str | None = None
    resumed: bool = False


class MLine(msgspec.Struct):
    header: dict[str, Any] | None = None
    case: MCase | None = None


# --- an older file, migrated on read --------------------------------------------------------
# A made-up version 0 spelled ``latency_s`` as ``latency``. pydantic migrates in the model
# (a ``mode="before"`` validator sees the raw dict of every case); msgspec has no such hook:
# the reader, told the file's version by its header, decodes old lines untyped, migrates
# the dict and converts it (a current file takes the typed path and pays nothing).

def migrate_v0(case: dict[str, Any]) -> dict[str, Any]:
    if "latency" in case:
        case["latency_s"] = case.pop("latency")
    return case


class PCaseMigrating(PCase):
    @pydantic.model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate_v0(data) if isinstance(data, dict) else data


class PLineMigrating(pydantic.BaseModel):
    header: dict[str, Any] | None = None
    case: PCaseMigrating | None = None


def read_pydantic_v0(path: Path) -> tuple[dict[str, Any], list[PCase]]:
    head: dict[str, Any] = {}
    cases: dict[tuple[str, str], PCase] = {}
    with path.open("rb") as lines:
        for line in lines:
            entry = PLineMigrating.model_validate_json(line)
            if entry.case is not None:
                cases[(entry.case.query_id, entry.case.engine)] = entry.case
            elif entry.header is not None:
                head = entry.header
    return head, list(cases.values())


def read_msgspec_v0(path: Path) -> tuple[dict[str, Any], list[MCase]]:
    head: dict[str, Any] = {}
    cases: dict[tuple[str, str], MCase] = {}
    with path.open("rb") as lines:
        for line in lines:
            entry = msgspec.json.decode(line)
            if "case" in entry:
                case = msgspec.convert(migrate_v0(entry["case"]), MCase)
                cases[(case.query_id, case.engine)] = case
            else:
                head = entry["header"]
    return head, list(cases.values())


def write_v0(path: Path, cases: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"header": header()}, ensure_ascii=False) + "\n")
        for case in cases:
            old = {("latency" if key == "latency_s" else key): value
                   for key, value in case.items()}
            fh.write('{"case": ' + json.dumps(old, ensure_ascii=False) + "}\n")


# --- readers -------------------------------------------------------------------------------

def read_pydantic(path: Path) -> tuple[dict[str, Any], list[PCase]]:
    head: dict[str, Any] = {}
    cases: dict[tuple[str, str], PCase] = {}
    with path.open("rb") as lines:
        for line in lines:
            entry = PLine.model_validate_json(line)
            if entry.case is not None:
                cases[(entry.case.query_id, entry.case.engine)] = entry.case
            elif entry.header is not None:
                head = entry.header
    return head, list(cases.values())


def read_msgspec(path: Path) -> tuple[dict[str, Any], list[MCase]]:
    decode = msgspec.json.Decoder(MLine).decode
    head: dict[str, Any] = {}
    cases: dict[tuple[str, str], MCase] = {}
    with path.open("rb") as lines:
        for line in lines:
            entry = decode(line)
            if entry.case is not None:
                cases[(entry.case.query_id, entry.case.engine)] = entry.case
            elif entry.header is not None:
                head = entry.header
    return head, list(cases.values())


def read_json_only(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``json.loads`` per line, nothing checked: the floor, not an option."""
    head: dict[str, Any] = {}
    cases: dict[tuple[str, str], dict[str, Any]] = {}
    with path.open(encoding="utf-8", newline="\n") as lines:
        for line in lines:
            entry = json.loads(line)
            if "case" in entry:
                cases[(entry["case"]["query_id"], entry["case"]["engine"])] = entry["case"]
            else:
                head = entry["header"]
    return head, list(cases.values())


READERS: dict[str, Callable[[Path], tuple[dict[str, Any], list[Any]]]] = {
    "json": read_run, "json-unchecked": read_json_only, "pydantic": read_pydantic,
    "msgspec": read_msgspec}


# --- measurements --------------------------------------------------------------------------

def best_of(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def encode_times(cases: list[dict[str, Any]], repeat: int) -> dict[str, float]:
    """Seconds to encode every case as its journal text, from each library's own object."""
    models = [PCase.model_validate(case) for case in cases]
    structs = [msgspec.convert(case, MCase) for case in cases]
    encode = msgspec.json.Encoder().encode
    return {
        "json": best_of(repeat, lambda: [json.dumps(c, ensure_ascii=False) for c in cases]),
        "pydantic": best_of(repeat, lambda: [m.model_dump_json() for m in models]),
        "msgspec": best_of(repeat, lambda: [encode(s) for s in structs]),
    }


def build_times(cases: list[dict[str, Any]], repeat: int) -> dict[str, float]:
    """Seconds for a writer to build every record from Python values (json: a dict copy;
    pydantic validates as it builds; msgspec's ``convert`` validates too)."""
    return {
        "json": best_of(repeat, lambda: [dict(c) for c in cases]),
        "pydantic": best_of(repeat, lambda: [PCase.model_validate(c) for c in cases]),
        "msgspec": best_of(repeat, lambda: [msgspec.convert(c, MCase) for c in cases]),
    }


def decode_times(path: Path, repeat: int) -> dict[str, float]:
    return {name: best_of(repeat, lambda read=read: read(path))
            for name, read in READERS.items()}


def traced_peak(path: Path, name: str) -> tuple[float, float]:
    """(peak, held) MB allocated reading the journal back and holding its cases."""
    gc.collect()
    tracemalloc.start()
    result = READERS[name](path)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return peak / 2**20, held / 2**20


def status_mb(field: str) -> float:
    """A ``/proc/self/status`` figure in MB: ``VmRSS`` now, ``VmHWM`` its peak (this
    image's: unlike ``ru_maxrss``, not inherited from the process that started us)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} in /proc/self/status")


def rss_child(name: str, path: Path) -> None:
    """In a fresh process: peak RSS growth (MB) reading the journal, printed."""
    before = status_mb("VmRSS")
    result = READERS[name](path)
    print(f"{status_mb('VmHWM') - before:.1f} {len(result[1])}")


def rss_growth(path: Path, name: str) -> float:
    out = subprocess.run([sys.executable, __file__, "--rss", name, str(path)],
                         check=True, capture_output=True, text=True).stdout.split()
    if int(out[1]) != CASES:
        raise SystemExit(f"{name} read {out[1]} cases, not {CASES}")
    return float(out[0])


def field_errors(cases: list[dict[str, Any]]) -> dict[str, str]:
    """What each library says of a journal line whose 4th result has a rating "x"."""
    bad = json.loads(json.dumps(cases[10]))
    bad["results"][3]["rating"] = "x"
    line = json.dumps({"case": bad})
    said = {}
    with tempfile.TemporaryDirectory() as name:
        path = Path(name) / "bad.partial.jsonl"
        path.write_text(json.dumps({"header": header()}) + "\n" + line + "\n")
        try:
            read_run(path)
            said["json"] = "(accepted)"
        except ConfigError as exc:
            said["json"] = str(exc)
    try:
        PLine.model_validate_json(line)
    except pydantic.ValidationError as exc:
        said["pydantic"] = " | ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                      for e in exc.errors())
    try:
        msgspec.json.Decoder(MLine).decode(line)
    except msgspec.ValidationError as exc:
        said["msgspec"] = str(exc)
    return said


def installed_mb(*dists: str) -> float:
    total = 0
    for dist in dists:
        for file in importlib.metadata.distribution(dist).files or ():
            located = Path(str(file.locate()))
            if located.is_file():
                total += located.stat().st_size
    return total / 2**20


def check_round_trip(cases: list[dict[str, Any]]) -> None:
    """The candidates write what today's writer writes (same keys, same values)."""
    encode = msgspec.json.Encoder().encode
    for case in cases[:200]:
        today = json.loads(json.dumps(case))
        for name, text_ in (("pydantic", PCase.model_validate(case).model_dump_json(
                exclude_defaults=True)), ("msgspec", encode(msgspec.convert(case, MCase)))):
            theirs = json.loads(text_)
            defaults = {"malformed_results": 0}
            if {**theirs, **defaults} != {**today, **defaults}:
                raise SystemExit(f"{name} does not round-trip case {case['query_id']}")


def cell(figures: dict[str, float], lib: str, scale: float, width: int,
         fmt: str = ".1f") -> str:
    """``value (ratio×)`` right-aligned in ``width``, or blank for a library not measured."""
    if lib not in figures:
        return " " * width
    text_ = f"{figures[lib] * scale:{fmt}} ({figures[lib] / figures['json']:.2f}×)"
    return f"{text_:>{width}}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rss", nargs=2, metavar=("LIBRARY", "JOURNAL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss:
        rss_child(args.rss[0], Path(args.rss[1]))
        return
    cases = make_cases()
    check_round_trip(cases)
    with tempfile.TemporaryDirectory() as name:
        path = Path(name) / "news__q__20261204-204350.partial.jsonl"
        write_journal(path, cases)
        size = path.stat().st_size / 2**20
        build = build_times(cases, args.repeat)
        encode = encode_times(cases, args.repeat)
        decode = decode_times(path, args.repeat)
        old = Path(name) / "v0.partial.jsonl"
        write_v0(old, cases)
        migrated = {"pydantic": best_of(args.repeat, lambda: read_pydantic_v0(old)),
                    "msgspec": best_of(args.repeat, lambda: read_msgspec_v0(old))}
        old.unlink()
        traced = {lib: traced_peak(path, lib) for lib in READERS}
        rss = {lib: rss_growth(path, lib) for lib in READERS}
    per = 1e6 / CASES
    print(f"schema libraries on a {CASES:,}-case news journal ({size:.0f} MB), Python "
          f"{sys.version.split()[0]}, pydantic {pydantic.VERSION}, msgspec "
          f"{msgspec.__version__}; best of {args.repeat}; ratios to today's json")
    print(f"{'per case / whole journal':16}{'build µs':>16}{'encode µs':>16}"
          f"{'decode+check µs':>17}{'traced peak MB':>16}{'held MB':>9}{'RSS growth MB':>15}")
    for lib in READERS:
        print(f"{lib:16}{cell(build, lib, per, 16)}{cell(encode, lib, per, 16)}"
              f"{cell(decode, lib, per, 17)}"
              f"{cell({k: v[0] for k, v in traced.items()}, lib, 1, 16, '.0f')}"
              f"{traced[lib][1]:9.0f}{cell(rss, lib, 1, 15, '.0f')}")
    print("reading a version-0 file, migrated case by case: "
          + "; ".join(f"{lib} {migrated[lib] * per:.1f} µs a case "
                      f"({migrated[lib] / decode[lib]:.2f}× its current-version read)"
                      for lib in migrated))
    print("(build: a writer making each record from Python values; json's is a dict copy, "
          "the candidates validate as they build)")
    print("one bad field (results[3].rating = \"x\"):")
    for lib, said in field_errors(cases).items():
        print(f"  {lib}: {said}")
    print(f"installed size: pydantic + pydantic-core + annotated-types + typing-inspection "
          f"{installed_mb('pydantic', 'pydantic-core', 'annotated-types', 'typing-inspection'):.1f}"
          f" MB; msgspec {installed_mb('msgspec'):.1f} MB")


if __name__ == "__main__":
    main()

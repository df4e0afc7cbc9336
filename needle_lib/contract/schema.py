"""The schema of Needle's result files, and the one reader of each (issue 33 item 1).

Every reader of a recall dump (``--resume``, ``--dump``, ``--baseline``, ``needle rescore``,
``merge``, ``status``, ``compare``, the dashboards) and of a search run (its report or its
journal: ``needle merge``, ``--resume``, the continuous history, ``needle publish``) goes
through here. A file is decoded, migrated when its ``schema_version`` is older than this
Needle's, and validated against the msgspec ``Struct`` models below in one pass; a file
that does not validate is one :class:`SchemaError` naming the file (and the journal line)
and the field path (``$.cases[3].outcome``), and the case's id where there is one.

What the models declare is what the readers rely on, not every field a run writes:

* **Unknown keys are allowed** (msgspec's default, kept on purpose). A newer Needle's extra
  fields, and the bench-specific fields that ride along on a search case (gold, ranks,
  verdicts), are neither an error nor dropped: the readers still hand back the decoded
  dicts, so every key on disk reaches the caller. Forbidding them would make a file written
  by the next version unreadable by this one.
* **Optional fields stay optional** where a file from an earlier Needle may lack them; a
  field that is present must have its declared type (``null`` only where it says so).
* Types are strict, as a reader of our own files wants: ``"3"`` is not an ``int`` and
  ``true`` is not one either; an ``int`` is a ``float``.

This step validates on read only: the readers return the same dicts as before (typed by
the TypedDicts of :mod:`needle_lib.contract.records`), and writers still build dicts. The
models are where the in-memory records are headed (``docs/kernel.md``).

Migration: the reader of an older file decodes it untyped, passes each record through the
chain of :data:`MIGRATIONS` steps (one plain ``dict -> dict`` function per version step)
and then converts it; a file of the current version pays nothing for it. Recall dumps
have been ``schema_version`` 2 and search runs 1 since Needle first wrote them, so no step
is registered yet; the first format change adds its step here and bumps the version.
A field added alongside, which only some runs write, is filled in on read instead, without
a version: a search header's ``engine_modes`` (:func:`engine_modes_of`), so a header
written before it reads as the mode its engines ran in, and files that never needed it
(no env-tuned engine) keep their bytes and their version.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Final, Literal, NotRequired, TypedDict, cast

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from needle_lib.contract.outcome import Outcome
from needle_lib.contract.records import (
    BenchCaseRecord,
    Composition,
    ScoringRecord,
    ShardRecord,
)
from needle_lib.contract.records import RecallDump as RecallDumpRecord
from needle_lib.judge.identity import JudgeSetup as JudgeBlock
from needle_lib.names import is_plain
from needle_lib.tomlconf import ConfigError

#: Recall dumps (``results/<corpus>__<model>.json`` and its run files).
RECALL_DUMP_SCHEMA_VERSION: Final = 2
#: Search runs: reports (top-level ``schema_version``) and journals (the header's, if it
#: says one; today's writers leave it out, which means this version).
SEARCH_RUN_SCHEMA_VERSION: Final = 1

FileKind = Literal["recall dump", "search run"]
CURRENT_VERSION: dict[FileKind, int] = {
    "recall dump": RECALL_DUMP_SCHEMA_VERSION,
    "search run": SEARCH_RUN_SCHEMA_VERSION,
}

#: The version a file that says none is: the first each kind was written with (today's
#: search journals say none).
FIRST_VERSION: dict[FileKind, int] = {"recall dump": 2, "search run": 1}

#: A migration step: a record of version N in, the same record as version N + 1 out. For a
#: recall dump the record is the whole dump; for a search run it is one entry, as a journal
#: line holds it (``{"header": {...}}`` or ``{"case": {...}}``; a report's header and each
#: of its cases go through one by one).
Migration = Callable[[dict[str, Any]], dict[str, Any]]
#: file kind → {version N: the step from N to N + 1}; chained by :func:`migrate`.
MIGRATIONS: dict[FileKind, dict[int, Migration]] = {"recall dump": {}, "search run": {}}


class SchemaError(ConfigError):
    """A result file that does not follow its schema (or is not JSON, or cannot be read);
    the message names the file and the field."""


# --- the models ----------------------------------------------------------------------------


class _Model(Struct, kw_only=True):
    """Base of every model: fields by keyword, unknown keys ignored (see the module doc)."""


def _doc(text: str) -> Meta:
    return Meta(description=text)


class Corpus(_Model, kw_only=True):
    name: Annotated[str, _doc("The corpus's name (it names dashboard pages).")]
    sha256: Annotated[str, _doc("Hash of the corpus's files: runs of one corpus compare.")]


class ModelInfo(_Model, kw_only=True):
    key: Annotated[str, _doc("The model as a run names it (``--model``).")]


class SamplingInfo(_Model, kw_only=True):
    """What readers use of a dump's ``sampling`` (``contract.records.Sampling``)."""

    primary_lines: Annotated[int | UnsetType, _doc(
        "Lines of each function asked for (``needle rescore`` finds targets by it).")] = UNSET


class Summary(_Model, kw_only=True):
    matched_pct: Annotated[float | None, _doc("Lines matched, percent of lines scored.")] = None


class _RecallCase(_Model, tag_field="outcome", kw_only=True):
    """One recall case; tagged on ``outcome``, which decides what else it must hold."""

    case_id: Annotated[str, _doc("The case's id (unique in its corpus).")]
    function: Annotated[str, _doc("The function whose body the model recalls.")]
    start_line: Annotated[int, _doc("Where the function starts in its file.")]
    response: Annotated[str | None, _doc("The answer as stored (may be cut).")] = None


class _ScoredRecallCase(_RecallCase, kw_only=True):
    """A case with a verdict carries its score (``recall.score.Score``)."""

    matched: int
    scored: int
    hallucinated: int
    reindented: int
    bonus: int
    composition: Composition


class PassedRecallCase(_ScoredRecallCase, tag=Outcome.PASSED.value):
    pass


class FailedRecallCase(_ScoredRecallCase, tag=Outcome.FAILED.value):
    pass


class ErroredRecallCase(_RecallCase, tag=Outcome.ERROR.value):
    pass


class SkippedRecallCase(_RecallCase, tag=Outcome.SKIPPED.value):
    pass


RecallCase = PassedRecallCase | FailedRecallCase | ErroredRecallCase | SkippedRecallCase


class RecallDump(_Model, kw_only=True):
    """``results/<corpus>__<model>.json``: one (corpus, model) run, as
    ``recall.results.new_dump`` writes it."""

    schema_version: Annotated[int, _doc("This file's format version.")] = (
        RECALL_DUMP_SCHEMA_VERSION)
    benchmark: Literal["recall"] = "recall"
    in_progress: Annotated[bool, _doc("The run is still writing this file.")]
    complete: Annotated[bool, _doc("Every expected case was asked and answered.")]
    valid: Annotated[bool, _doc("No infrastructure error: the run may be ranked.")]
    corpus: Corpus
    model: ModelInfo
    scoring: Annotated[ScoringRecord, _doc("The scoring policy the cases were scored under.")]
    sampling: SamplingInfo | UnsetType = UNSET
    summary: Summary | UnsetType = UNSET
    shard: ShardRecord | UnsetType = UNSET
    cases: list[RecallCase]


class Queries(_Model, kw_only=True):
    count: Annotated[int, _doc("Queries in the bench's query set.")]


class JudgeSetup(_Model, kw_only=True):
    """A header's ``judge`` block (``judge.identity``); reports of an earlier Needle carry
    only ``model``, ``prompt_version`` and ``concurrency``."""

    model: Annotated[str, _doc("The judge model as Needle asked for it.")]
    prompt_version: Annotated[str, _doc("The verdict prompt's version (cache key).")]
    concurrency: Annotated[int | UnsetType, _doc("Judge calls in flight at most.")] = UNSET
    profile_prompt_version: Annotated[
        str | UnsetType, _doc("Judged benches: the query profile prompt's version.")] = UNSET
    served_models: Annotated[
        list[str] | UnsetType, _doc("Model ids the judge's server answered with.")] = UNSET
    outputs: Annotated[list[str] | UnsetType, _doc(
        "How replies were asked for: ``json_schema``, ``json_object`` or ``text``.")] = UNSET


class SearchHeader(_Model, kw_only=True):
    """A search run's setup: the journal's first line and a report's ``header``."""

    schema_version: Annotated[int, _doc("Format version (absent: 1).")] = (
        SEARCH_RUN_SCHEMA_VERSION)
    bench: Annotated[str, _doc("The bench (a plain name: it names site pages and files).")]
    engines: Annotated[list[str], _doc("The engines asked, in order.")]
    num_results: Annotated[int, _doc("Results asked of each engine (top K).")]
    queries: Queries
    kind: Annotated[str | UnsetType, _doc("``judged`` or ``known_item``.")] = UNSET
    expected_cases: Annotated[int | UnsetType, _doc("Queries × engines.")] = UNSET
    judge: Annotated[JudgeSetup | UnsetType | None, _doc(
        "The judge of a judged run (or of ``--judge``); null when nothing was judged.")] = UNSET
    engine_modes: Annotated[dict[str, str] | UnsetType, _doc(
        "engine → mode, for each engine whose mode the environment tunes (``TAVILY_DEPTH``, "
        "``SERPER_LOCALE``); absent when no such engine ran (see ``MODES_BEFORE_RECORDED``)."
    )] = UNSET


class QueriesRecord(TypedDict):
    """A search header's ``queries``: the query file and how many rows the bench took."""

    path: str
    sha256: str | None
    count: int


class SamplingRecord(TypedDict):
    """``--sample``/``--seed``/``--limit`` as the run applied them."""

    sample: int | None
    seed: int
    limit: int | None


class ResumedFromRecord(TypedDict):
    """``--resume``: the run this one continues and how many of its cases it kept."""

    run: str
    answered_cases: int


class SearchShardRecord(TypedDict):
    """``--shard I/N`` of a search run: its queries are split (``by``: ``query``)."""

    index: int
    count: int
    by: str


class SearchHeaderRecord(TypedDict):
    """A search run's header, in its key order (the JSON on disk keeps it): what
    ``SearchPlan.header`` builds, then what the run adds as it writes the journal
    (``resumed_from``, ``started_at``, ``clock``, ``shard``; the report's assembly puts the
    judges seen in ``judge``). :class:`SearchHeader` is what a reader checks of it.

    A run writes every key ``SearchPlan.header`` builds, but a header read back may be an
    older Needle's: the keys :class:`SearchHeader` lets it lack are ``NotRequired`` here,
    so a reader takes them with ``.get``."""

    bench: str
    kind: NotRequired[str]
    queries: QueriesRecord
    engines: list[str]
    num_results: int
    snippet_chars: NotRequired[int]
    judged: NotRequired[bool]
    judge: NotRequired[JudgeBlock | None]
    sampling: NotRequired[SamplingRecord]
    #: ``provenance.package_info()``: name, version, git revision
    package: NotRequired[dict[str, str]]
    expected_cases: NotRequired[int]
    #: only when an engine of the run has an env-tuned mode: runs without one keep the
    #: bytes they always had
    engine_modes: NotRequired[dict[str, str]]
    resumed_from: NotRequired[ResumedFromRecord]
    #: when the run started (ISO, UTC): a run's identity in ``needle publish``
    started_at: NotRequired[str]
    #: ``clock.clock_record()``: the moment the run is for and the judge's today
    clock: NotRequired[dict[str, str | None]]
    shard: NotRequired[SearchShardRecord]


#: The mode each env-tuned engine ran in before headers recorded ``engine_modes``: the
#: defaults of those versions, so an old run reads as what it was (a historical fact, kept
#: apart from the registry's defaults, which may move on; a test checks they agree today).
MODES_BEFORE_RECORDED: Final[dict[str, str]] = {"tavily": "basic", "google": "us/en"}


def engine_modes_of(header: Mapping[str, object]) -> dict[str, str]:
    """engine → mode of a search header: its ``engine_modes``, each env-tuned engine it
    ran without one read as that engine's default then (``MODES_BEFORE_RECORDED``)."""
    recorded = header.get("engine_modes")
    modes = dict(recorded) if isinstance(recorded, dict) else {}
    engines = header.get("engines")
    for engine in engines if isinstance(engines, list) else ():
        if engine in MODES_BEFORE_RECORDED and engine not in modes:
            modes[engine] = MODES_BEFORE_RECORDED[engine]
    return modes


def _with_engine_modes(header: SearchHeaderRecord) -> None:
    """Migrate on read, in place: a header that ran an env-tuned engine without saying its
    mode gets the mode it ran in. Every other header is left as it is (same bytes back)."""
    modes = engine_modes_of(header)
    if modes and header.get("engine_modes") != modes:
        header["engine_modes"] = modes


class SearchResult(_Model, kw_only=True):
    url: Annotated[str, _doc("The result's URL as the engine sent it.")]
    rating: Annotated[int | UnsetType | None, _doc("The judge's rating (judged).")] = UNSET


class SearchCase(_Model, kw_only=True):
    """One (query, engine) case; bench-specific fields ride along undeclared."""

    query_id: str
    query: str
    engine: str
    results: Annotated[list[SearchResult], _doc("The engine's results, ranked.")]
    outcome: Annotated[Outcome | UnsetType | None, _doc("Decided once (contract).")] = UNSET
    stratum: str | UnsetType | None = UNSET
    search_error: str | UnsetType | None = UNSET
    latency_s: float | UnsetType | None = UNSET
    judge_errors: int | UnsetType = UNSET
    judge_requests: int | UnsetType = UNSET
    retries: int | UnsetType = UNSET
    judge_served_model: Annotated[str | UnsetType | None, _doc(
        "The model id the judge's server answered the case's verdicts with, cached or "
        "fresh (the newest where they differ; ``judge.base.seen_in``).")] = UNSET
    judge_output: Annotated[str | UnsetType | None, _doc(
        "How the judge's replies were asked for (``judge.identity``).")] = UNSET


class SearchReportFile(_Model, kw_only=True):
    """``results/search/<bench>__<queries>-<stamp>.json``: pooled tables (not validated:
    a report read back is scored again from its cases) and the run's header and cases."""

    schema_version: int = SEARCH_RUN_SCHEMA_VERSION
    header: SearchHeader
    cases: list[SearchCase]


class JournalHeaderLine(_Model, kw_only=True):
    """``<report>.partial.jsonl``, first line."""

    header: SearchHeader


class JournalCaseLine(_Model, kw_only=True):
    """``<report>.partial.jsonl``, every later line: one case (a later line of the same
    (query, engine) replaces an earlier one)."""

    case: SearchCase


# --- reading ------------------------------------------------------------------------------

_CASE_AT = re.compile(r"`\$\.cases\[(\d+)\]")


def _fail(where: str, exc: msgspec.ValidationError, data: Any = None) -> SchemaError:
    """One SchemaError naming ``where`` (file, or file:line), the field and the case (of a
    report's or dump's ``cases``, or a journal line's ``case``)."""
    text = str(exc)
    case: Any = None
    found = _CASE_AT.search(text)
    if found and isinstance(data, dict) and isinstance(data.get("cases"), list):
        cases = data["cases"]
        index = int(found.group(1))
        case = cases[index] if index < len(cases) else None
    elif "`$.case" in text and isinstance(data, dict):
        case = data.get("case")
    ident = case.get("case_id", case.get("query_id")) if isinstance(case, dict) else None
    if isinstance(ident, str):
        text += f" (case {ident!r})"[:200]
    return SchemaError(f"{where}: {text}")


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cycle collector paused while a large file is decoded: decoded JSON holds no
    cycles, and a collection triggered every few hundred new dicts walks every dict decoded
    so far (reading a 20,000-case report took 3× as long with it on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _decode(data: bytes) -> Any:
    """JSON ``data`` decoded untyped by msgspec; what msgspec refuses and Python's json
    reads (``NaN``, ``Infinity``: json.dumps writes them for a non-finite float) is read as
    today's readers read it. Bad JSON raises ``ValueError``."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError("JSON nested too deeply to parse") from None
        except ValueError:
            raise ValueError(str(exc)) from None


def read_json_file(path: Path) -> Any:
    """The JSON in ``path``, unchecked; a broken or unreadable file is a SchemaError naming
    it (with line and column for bad JSON)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: "
                          f"{exc.msg}") from exc
    except RecursionError:
        raise SchemaError(f"{path}: invalid JSON: nested too deeply to parse") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"{path}: cannot read: {exc}") from exc


def _version(where: str, kind: FileKind, raw: Any) -> int:
    version = FIRST_VERSION[kind] if raw is None else raw
    if isinstance(version, bool) or not isinstance(version, int):
        raise SchemaError(f"{where}: schema_version should be an integer, got {raw!r}"[:300])
    return version


def migrate(kind: FileKind, record: dict[str, Any], version: int, where: str) -> dict[str, Any]:
    """``record`` (of ``version``) brought to the current version by the chained steps of
    :data:`MIGRATIONS`; a newer version is read as it is (unknown keys are ignored)."""
    while version < CURRENT_VERSION[kind]:
        step = MIGRATIONS[kind].get(version)
        if step is None:
            raise SchemaError(f"{where}: schema_version {version} is older than any this "
                              f"Needle reads (a {kind} of version {CURRENT_VERSION[kind]})")
        record = step(record)
        version += 1
    return record


def validate_recall_dump(path: Path, data: Any) -> RecallDumpRecord:
    """``data`` (decoded from ``path``) validated as a recall dump, migrated first when it
    is older; the (migrated) dict itself is returned."""
    where = str(path)
    if isinstance(data, dict):
        version = _version(where, "recall dump", data.get("schema_version"))
        if version < RECALL_DUMP_SCHEMA_VERSION:
            data = migrate("recall dump", data, version, where)
    try:
        msgspec.convert(data, RecallDump)
    except msgspec.ValidationError as exc:
        raise _fail(where, exc, data) from None
    return cast(RecallDumpRecord, data)


def read_recall_dump(path: Path) -> RecallDumpRecord:
    """The recall dump in ``path``, validated (staleness and setup are the caller's call)."""
    data = read_json_file(path)
    if isinstance(data, dict) and data.get("benchmark", "recall") != "recall":
        raise SchemaError(f"{path}: not a recall dump (benchmark={data.get('benchmark')!r})")
    return validate_recall_dump(path, data)


#: A search run read back: its header and its cases. The cases are validated against
#: :class:`SearchCase` (the fields every case shares); a bench's own fields (gold, ranks,
#: the judge's profile) ride along as written, which the folds read with defaults.
SearchRun = tuple[SearchHeaderRecord, list[BenchCaseRecord]]


def _check_bench(where: str, header: SearchHeaderRecord) -> None:
    if not is_plain(header["bench"]):  # it names pages and files of the site
        raise SchemaError(f"{where}: header.bench {header['bench']!r} is not a plain name "
                          "(letters, digits, '.', '_', '-'); refusing a tampered report"[:300])


def validate_search_run(path: Path, header: Any, cases: Any, *,
                        version: Any = None) -> SearchRun:
    """A report's ``header`` and ``cases`` (from ``path``) validated, migrated first when
    ``version`` (the report's ``schema_version``; None: the first) is older; the (migrated)
    header and cases are returned."""
    where = str(path)
    version = _version(where, "search run", version)
    if version < SEARCH_RUN_SCHEMA_VERSION and isinstance(header, dict):
        header = migrate("search run", {"header": header}, version, where)["header"]
        if isinstance(cases, list):
            cases = [migrate("search run", {"case": case}, version, where)["case"]
                     for case in cases]
    data = {"header": header, "cases": cases}
    try:
        msgspec.convert(data, SearchReportFile)
    except msgspec.ValidationError as exc:
        raise _fail(where, exc, data) from None
    _check_bench(where, header)
    _with_engine_modes(header)
    return cast(SearchRun, (header, cases))  # validated above


def read_search_report(path: Path) -> SearchRun:
    """(header, cases) of the search report in ``path``, validated."""
    with _no_gc():
        try:
            with path.open("rb") as fh:
                report = _decode(fh.read())
        except (OSError, ValueError) as exc:
            raise SchemaError(f"{path}: cannot read search report: {exc}") from None
        if not isinstance(report, dict) or "header" not in report or "cases" not in report:
            raise SchemaError(f"{path}: not a Needle search report (no 'header' and "
                              "'cases')")
        return validate_search_run(path, report["header"], report["cases"],
                                   version=report.get("schema_version"))


#: Values up to this long are held once across a journal's lines: labels, gate verdicts,
#: engine names (msgspec already shares keys).
SHARED_VALUE_CHARS = 16


def _sharing_values() -> Callable[[Any], None]:
    """A function that makes, in place, one string object of each short value across every
    record it is given. A journal is a JSON document per line: 20,000 cases read back held
    every gate verdict once per case."""
    seen: dict[str, str] = {}  # the first string of each text
    share = seen.setdefault

    def walk(node: Any) -> None:
        if node.__class__ is dict:
            for key, value in node.items():
                if value.__class__ is str:
                    if len(value) <= SHARED_VALUE_CHARS:
                        node[key] = share(value, value)
                elif value.__class__ is dict or value.__class__ is list:
                    walk(value)
        elif node.__class__ is list:
            for index, value in enumerate(node):
                if value.__class__ is str:
                    if len(value) <= SHARED_VALUE_CHARS:
                        node[index] = share(value, value)
                elif value.__class__ is dict or value.__class__ is list:
                    walk(value)

    return walk


#: One journal line's record: the header, or one case.
JournalObject = dict[str, Any]


def _json_type(value: object) -> str:
    """``value``'s JSON type as msgspec's messages name it (``array``, ``int``, ``null``…),
    so a hand check reads like the schema's own."""
    names = {bool: "bool", int: "int", float: "float", str: "str", list: "array"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def journal_entries(path: Path) -> Iterator[tuple[int, str, JournalObject]]:
    """(line number, ``"header"`` or ``"case"``, the record) of each line of a run journal
    (search or recall), in order, untyped: the caller validates. A line that is not JSON is
    forgiven only as the last one (a line cut short by a kill is the case in flight); a line
    of another kind (a newer Needle's) is passed over. Read line by line (a 20,000-case
    journal is never held as text) and split at ``\\n`` only: a snippet may hold U+2028,
    which ``str.splitlines`` would also split at."""
    cut: int | None = None
    try:
        with path.open("rb") as lines:
            for number, line in enumerate(lines, start=1):
                if cut is not None:
                    raise SchemaError(f"{path}:{cut}: not JSON")
                try:
                    entry = _decode(line)
                except ValueError:
                    cut = number
                    continue
                if not isinstance(entry, dict):
                    raise SchemaError(f"{path}:{number}: not a journal entry (an object "
                                      "with 'header' or 'case')")
                for kind in ("header", "case"):
                    if kind in entry:
                        record = entry[kind]
                        if not isinstance(record, dict):
                            raise SchemaError(f"{path}:{number}: Expected `object`, got "
                                              f"`{_json_type(record)}` - at `$.{kind}`")
                        yield number, kind, record
                        break
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read journal: {exc}") from None


def read_search_journal(path: Path) -> SearchRun:
    """(header, cases) of a run's journal, every line validated as it is read; a later line
    of the same (query, engine) wins, as in the run itself. A line that is not JSON is
    forgiven only as the last one (a line cut short by a kill is the case in flight)."""
    with _no_gc():
        return _read_search_journal(path)


def _read_search_journal(path: Path) -> SearchRun:
    convert = msgspec.convert
    shared = _sharing_values()
    header: SearchHeaderRecord | None = None
    version = SEARCH_RUN_SCHEMA_VERSION
    cases: dict[tuple[str, str], JournalObject] = {}
    for number, kind, record in journal_entries(path):
        where = f"{path}:{number}"
        entry: dict[str, JournalObject] = {kind: record}
        if kind == "header":
            version = _version(where, "search run", record.get("schema_version"))
        model: type[_Model] = JournalHeaderLine if kind == "header" else JournalCaseLine
        if version < SEARCH_RUN_SCHEMA_VERSION:
            entry = migrate("search run", entry, version, where)
        try:
            convert(entry, model)
        except msgspec.ValidationError as exc:
            raise _fail(where, exc, entry) from None
        if model is JournalHeaderLine:
            header = cast(SearchHeaderRecord, entry["header"])  # validated just above
            _check_bench(where, header)
            _with_engine_modes(header)
        else:
            case = entry["case"]
            shared(case)
            cases[(case["query_id"], case["engine"])] = case
    if header is None:
        raise SchemaError(f"{path}: journal has no header line")
    return header, cast(list[BenchCaseRecord], list(cases.values()))  # validated line by line

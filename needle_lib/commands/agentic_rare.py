"""`needle agentic-rare filter | generate`: rare-word queries from an agent query stream.

filter    keep the stream's English queries that carry a rare word (BERT WordPiece ≥ 5 pieces
          or [UNK]); writes the artifact (Parquet or JSONL) with length_bucket, n_words,
          hard_words, max_pieces
generate  sample query rows from the artifact, stratified by length_bucket; then
          `pytest evals -k agentic_rare --queries queries.jsonl`

Without --queries, both read the published files of the Hugging Face dataset (downloaded
once, then cached). Needs the optional extra: uv sync --extra rare.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from needle_lib.argtypes import positive_int
from needle_lib.benches.agentic_rare.filter import FilterPolicy, RareFilter, filter_stream, finish
from needle_lib.benches.agentic_rare.generate import DEFAULT_LIMIT, sample_query_rows
from needle_lib.benches.agentic_rare.hub import (
    ARTIFACT_FILE,
    DEFAULT_DATASET,
    STREAM_FILE,
    hub_file,
)
from needle_lib.benches.agentic_rare.language import english_zipf, fasttext_identify
from needle_lib.benches.agentic_rare.table import count_rows, read_rows, write_parquet
from needle_lib.benches.agentic_rare.wordpiece import vocab_path, wordpiece
from needle_lib.benches.rows import write_rows
from needle_lib.clock import utc_now
from needle_lib.commands.generation import add_bench_parser
from needle_lib.console import count_of
from needle_lib.progress import Progress

_PROGRESS_EVERY = 1000
T = TypeVar("T")
DROP_REASONS = ("bad_length", "urlish", "too_few_words", "long_word", "ineligible",
                "no_rare_word", "non_english", "ngram_dup")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser, actions = add_bench_parser(
        subparsers, "agentic-rare", help="rare-word queries from an agent query stream",
        description=__doc__, dest="rare_action")
    filt = actions.add_parser("filter", help="filter a query stream down to rare-word queries")
    filt.add_argument("--queries", type=Path, default=None,
                      help=f"stream (.parquet or .jsonl); default: {STREAM_FILE} of --dataset")
    filt.add_argument("--vocab", type=Path, default=None,
                      help="WordPiece vocab.txt (default: bert-base-uncased from the hub)")
    filt.add_argument("--any-language", action="store_true",
                      help="skip the English gate")
    filt.add_argument("--subword-threshold", type=positive_int, default=5,
                      help="pieces that make a word rare (default 5)")
    filt.add_argument("--dedup-ngram", type=positive_int, default=3,
                      help="word n-gram size of the near-copy cap (default 3)")
    filt.add_argument("--dedup-max", type=positive_int, default=2,
                      help="rows one n-gram may appear in (default 2)")
    filt.add_argument("--out", type=Path, required=True,
                      help="artifact path: .parquet (zstd) or anything else for JSONL")
    gen = actions.add_parser("generate", help="sample query rows from the filtered artifact")
    gen.add_argument("--queries", type=Path, default=None,
                     help=f"filtered artifact (.parquet or .jsonl); default: {ARTIFACT_FILE} "
                          "of --dataset")
    gen.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                     help=f"rows to sample (0 = all; default {DEFAULT_LIMIT})")
    gen.add_argument("--seed", type=int, default=None,
                     help="sampling seed (default: derived from the UTC hour)")
    gen.add_argument("--out", required=True, help="query rows, JSONL (- = stdout)")
    for action in (filt, gen):
        action.add_argument("--query-field", default="query_text",
                            help="column holding the query text (default query_text)")
        action.add_argument("--dataset", default=DEFAULT_DATASET,
                            help=f"Hugging Face dataset of the published files "
                                 f"(default {DEFAULT_DATASET})")
    parser.set_defaults(func=run)


def _source(args: argparse.Namespace, published: str) -> Path:
    if args.queries is not None:
        return args.queries
    return hub_file(args.dataset, published, repo_type="dataset", instead="--queries FILE")


def _filter(args: argparse.Namespace) -> int:
    stream = _source(args, STREAM_FILE)
    policy = FilterPolicy(subword_threshold=args.subword_threshold, ngram=args.dedup_ngram,
                          ngram_max=args.dedup_max, any_language=args.any_language)
    rare = RareFilter(
        wordpiece(vocab_path(args.vocab)),
        None if args.any_language else fasttext_identify(),
        None if args.any_language else english_zipf(),
        policy,
    )
    total = count_rows(stream)
    bar = Progress("agentic-rare: filtering", total)
    passed = list(filter_stream(_counted(read_rows(stream), bar), rare,
                                query_field=args.query_field))
    bar.close()
    kept = finish(passed, rare, query_field=args.query_field)
    drops = ", ".join(f"{reason} {rare.stats[reason]}" for reason in DROP_REASONS)
    print(f"agentic-rare filter: read {total}, kept {len(kept)}; dropped: {drops}",
          file=sys.stderr)
    if args.out.suffix.lower() == ".parquet":
        write_parquet(kept, args.out)
    else:
        write_rows(kept, str(args.out))
    print(f"wrote {count_of(len(kept), 'row')} to {args.out}", file=sys.stderr)
    return 0


def _counted(rows: Iterator[T], bar: Progress) -> Iterator[T]:
    """Pass rows through, advancing ``bar`` every few rows (a redraw per row is too slow)."""
    pending = 0
    for row in rows:
        yield row
        pending += 1
        if pending == _PROGRESS_EVERY:
            bar.advance(pending)
            pending = 0
    bar.advance(pending)


def _generate(args: argparse.Namespace) -> int:
    artifact = _source(args, ARTIFACT_FILE)
    rows = sample_query_rows(read_rows(artifact), now=utc_now(), limit=args.limit,
                             seed=args.seed, query_field=args.query_field)
    if not rows:
        print(f"needle agentic-rare generate: {artifact} has no rows; nothing written",
              file=sys.stderr)
        return 1
    written = write_rows(rows, args.out)
    buckets: dict[str, int] = {}
    for row in rows:
        bucket = str(row["length_bucket"])
        buckets[bucket] = buckets.get(bucket, 0) + 1
    mix = ", ".join(f"{name} {count}" for name, count in sorted(buckets.items()))
    print(f"agentic-rare generate: {written} query rows ({mix})", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    return _filter(args) if args.rare_action == "filter" else _generate(args)

"""`needle extract`: what a recall run would ask about, and the ground truth it expects."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from needle_lib.argtypes import positive_int
from needle_lib.recall import size
from needle_lib.recall.corpus import repo_config, resolve_corpus, single_file_config, sized_for
from needle_lib.recall.suite import RecallSuite, load_suite
from needle_lib.recall.targets import Target
from needle_lib.tokens import REFERENCE


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("extract", help="list recall targets or show one's ground truth")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", help="corpus config name or path")
    source.add_argument("--file", help="a single source file (no corpus config)")
    source.add_argument("--repo", metavar="PATH", help="a git checkout, as `pytest evals --repo`")
    parser.add_argument("--max-prompt-tokens", type=positive_int, metavar="N",
                        help="prompt budget of a --repo / [repo] corpus (default 30,720)")
    parser.add_argument("--primary-lines", type=positive_int, metavar="N",
                        help="window size: ask for the first N body lines, so only functions "
                        "with at least N body lines are eligible (default: the config's, else 20)")
    parser.add_argument("--all", action="store_true", help="every eligible target, not a sample")
    parser.add_argument("--show", metavar="NAME", help="print one target's expected lines")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def target_record(suite: RecallSuite, target: Target) -> dict:
    function = target.function
    return {
        "name": target.name,
        "case_id": target.case_id,
        "file": function.file,
        "signature": function.signature,
        "start_line": target.start_line,
        "body_lines": function.body_length,
        "lines": target.window(suite.corpus.lines),
        "language": function.language,
        "composition": suite.composition(target),
        "prompt_tokens": size.prompt_tokens(suite.corpus, target, no_think=False),
    }


def run(args: argparse.Namespace) -> int:
    if args.repo:
        config = repo_config(args.repo)
    else:
        config = resolve_corpus(args.corpus) if args.corpus else single_file_config(args.file)
    config = sized_for(config, [], args.max_prompt_tokens)
    if args.primary_lines is not None:
        config = replace(config, sample=replace(config.sample, primary_lines=args.primary_lines))
    suite = load_suite(config)
    left_out = suite.corpus.left_out_message()  # names its corpus itself
    if left_out:
        print(left_out, file=sys.stderr)
    for message in (suite.target_set.exclusion_message(), suite.target_set.nothing_to_ask()):
        if message:
            print(f"{suite.config.name}: {message}", file=sys.stderr)
    targets = suite.target_set.eligible if args.all or args.show else suite.targets
    if args.show:
        targets = [t for t in targets if args.show in (t.name, t.case_id)]
        if not targets:
            print(f"needle extract: no eligible target named {args.show!r}", file=sys.stderr)
            return 1
    records = [target_record(suite, t) for t in targets]
    if args.json:
        json.dump(records, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
        return 0
    if args.show:
        for record, target in zip(records, targets, strict=True):
            kinds = target.window_kinds(suite.parsed.kinds)
            print(f"=== {record['case_id']}  {record['file']}:{record['start_line']} ===")
            print(f"signature: {record['signature']}")
            for offset, (line, kind) in enumerate(zip(record["lines"], kinds, strict=True)):
                print(f"{record['start_line'] + offset:>6} {kind:<9}| {line}")
        return 0
    scope = "eligible" if args.all else f"sampled (k={suite.config.sample.k})"
    print(f"{suite.config.name}: {len(records)} {scope} target(s)")
    print(f"  functions: {suite.target_set.shortfall()}")
    repo = suite.corpus.repo
    if repo is not None:
        print(f"  repo: {repo.root} at {repo.commit[:12]}{' (local changes)' if repo.dirty else ''}"
              f"; {len(repo.files)} of {repo.candidates} readable file(s) fit "
              f"{repo.budget:,} prompt tokens: {', '.join(repo.files)}")
    prompts = [record["prompt_tokens"] for record in records]
    span = f", prompts {min(prompts):,}–{max(prompts):,} tokens" if prompts else ""
    print(f"  size: corpus {suite.corpus.tokens:,} tokens{span} ({REFERENCE}; "
          f"{len(suite.corpus.text):,} chars)")
    for record in records:
        comp = record["composition"]
        print(
            f"  {record['case_id']:<28} {record['file']}:{record['start_line']:<6} "
            f"body {record['body_lines']:>4} lines · code {comp['code']} "
            f"blank {comp['blank']} comment {comp['comment']} docstring {comp['docstring']}"
        )
    return 0

"""`needle rescore DUMP`: the same report under another scoring policy; no network."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from needle_lib.console import want_color
from needle_lib.contract.outcome import Outcome
from needle_lib.recall.corpus import ScoringPolicy
from needle_lib.recall.journal import read_recall_run
from needle_lib.recall.rescore import dump_corpus, rescore_dump
from needle_lib.report.terminal import case_headline, composition_line, explain_case, summary_table


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("rescore", help="re-score a recall dump under another policy",
                            description="Re-score the answers stored in a recall dump under "
                            "another scoring policy (the recorded one by default); no network.")
    parser.add_argument("dump", type=Path, help="a recall dump, results/<corpus>__<model>.json")
    parser.add_argument("--corpus", help="corpus config (default: the one the dump names)")
    indent = parser.add_mutually_exclusive_group()
    indent.add_argument("--relax-indent", dest="relax_indent", action="store_const", const=True,
                        help="score content ignoring leading whitespace")
    indent.add_argument("--strict-indent", dest="relax_indent", action="store_const",
                        const=False, help="score lines verbatim, indentation included")
    comments = parser.add_mutually_exclusive_group()
    comments.add_argument("--no-comments", dest="count_comments", action="store_const",
                          const=False, help="score code lines only")
    comments.add_argument("--count-comments", dest="count_comments", action="store_const",
                          const=True, help="comments and docstrings earn credit too")
    parser.add_argument("--json", action="store_true", help="print the re-scored dump")
    color = parser.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_const", const=True,
                       help="colour the diffs even when stdout is not a terminal")
    color.add_argument("--no-color", dest="color", action="store_const", const=False,
                       help="plain diffs (NO_COLOR is honoured too)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    dump = read_recall_run(args.dump)
    stored = dump.get("scoring", {})
    policy = ScoringPolicy(
        count_comments=(args.count_comments if args.count_comments is not None
                        else stored.get("count_comments", True)),
        relax_indent=(args.relax_indent if args.relax_indent is not None
                      else stored.get("relax_indent", False)),
    )
    rescored, diffs = rescore_dump(dump, dump_corpus(dump, args.corpus), policy)
    if args.json:
        json.dump(rescored, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
        return 0
    color = want_color(sys.stdout, args.color)
    print(f"{args.dump}: re-scored with count_comments={policy.count_comments}, "
          f"relax_indent={policy.relax_indent} (recorded: {stored})")
    for case in rescored["cases"]:
        if case["case_id"] not in diffs:
            print(f"=== {case['function']}  [{str(case['outcome']).upper()}] (not re-scored) ===")
        elif case["outcome"] == Outcome.FAILED:
            print(explain_case(case, diffs[case["case_id"]], color=color))
        else:
            print(case_headline(case))
            print("  " + composition_line(case["composition"]))
    print(summary_table([rescored], color=color))
    return 0

"""`needle schedule`: the continuous cadence, and which benches a trigger runs.

Without a trigger it prints the schedule (bench, cron line, kept gold). With ``--cron``
(the line that fired), ``--bench``/``--dispatch-json`` (a manual run) and ``--gold-dir``
it prints the benches due, one per line with the reason; ``--github-output`` also writes
them as a JSON list for a workflow's job matrix.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from needle_lib.continuous.schedule import (
    MINUTE,
    SCHEDULE,
    cron_lines,
    dispatch_choice,
    due,
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("schedule", help="continuous search runs: cadence and what is due")
    parser.add_argument("--cron", default=None, metavar="LINE",
                        help="the cron line that fired (GitHub: github.event.schedule)")
    parser.add_argument("--bench", action="append", default=[], metavar="NAME",
                        help="run this bench now (repeatable; a manual dispatch)")
    parser.add_argument("--dispatch-json", default=None, metavar="JSON",
                        help='a manual dispatch\'s inputs, e.g. {"news": true}')
    parser.add_argument("--gold-dir", type=Path, default=None, metavar="DIR",
                        help="where daily benches keep their gold; a missing file makes "
                             "its bench due")
    parser.add_argument("--github-output", type=Path, default=None, metavar="FILE",
                        help="append benches=<JSON list> (e.g. $GITHUB_OUTPUT)")
    parser.set_defaults(func=run)


def _print_schedule() -> None:
    print(f"{'bench':<14} {'runs (UTC)':<22} gold kept between runs")
    for bench, cadence in SCHEDULE.items():
        when = (f"every hour at :{MINUTE}" if cadence.hour is None
                else f"daily at {cadence.hour:02d}:{MINUTE}")
        print(f"{bench:<14} {when:<22} {cadence.gold_file or '— (fresh queries each run)'}")
    print("\ncron lines (a daily line also runs the hourly benches):")
    for line, benches in cron_lines().items():
        print(f"  {line:<32} {', '.join(benches)}")


def run(args: argparse.Namespace) -> int:
    picked = list(args.bench)
    if args.dispatch_json is not None:
        picked += dispatch_choice(args.dispatch_json)
    if args.cron is None and not picked and args.gold_dir is None:
        _print_schedule()
        return 0
    found = due(cron=args.cron, dispatch=picked, gold_dir=args.gold_dir)
    for item in found:
        print(f"{item.bench}\t{item.reason}")
    if not found:
        print("nothing due")
    if args.github_output is not None:
        with args.github_output.open("a", encoding="utf-8") as fh:
            fh.write(f"benches={json.dumps([item.bench for item in found])}\n")
    return 0

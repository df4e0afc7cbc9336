"""Function extraction against Universal Ctags on real files (issue 37; not a test).

For each file: how many of the functions ctags finds with a body of at least
``--min-body`` lines (ctags' span: from the name's line to the closing line, exclusive)
the extractor finds by name, how many it finds at the same place closing on the same line,
and how many *wrong bodies* it has — an extracted function at a place ctags names that
closes on another line. Functions only the extractor finds are listed with ``-v`` to be
judged by eye (ctags skips some forms, e.g. functions nested in another's body).

ctags gives Rust no end line, so for Rust the span cannot be measured: the file's line
says how many of ctags' functions (of any length) the extractor finds at the same place,
and how many of its own reach ``--min-body`` body lines.

The files come from Debian packages (see docs/languages.md, "Checked against ctags")::

    apt-get download nlohmann-json3-dev libboost1.74-dev qtbase5-dev v4l2loopback-dkms rust-src
    for deb in *.deb; do dpkg -x "$deb" root; done

Run: ``uv run python benchmarks/extract_vs_ctags.py [-v] [--min-body N] FILE[:LANGUAGE]…``
(a ``.h`` file is C or C++ as ``needle`` decides from its text; ``:c`` or ``:cpp`` says
which, and ctags is told the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from needle_lib.recall.languages import language_of  # noqa: E402
from needle_lib.testing.ctags import Agreement, compare, same_place  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE[:LANGUAGE]")
    parser.add_argument("--min-body", type=int, default=20)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    wrong = 0
    for spec in args.files:
        path, language = _file_and_language(spec)
        agreement = compare(path, language, args.min_body)
        print(_summary(agreement))
        details = _details(agreement) if args.verbose else ""
        if details:
            print(details)
        wrong += len(agreement.wrong)
    print(f"wrong bodies in all files: {wrong}")
    return 1 if wrong else 0


def _file_and_language(spec: str) -> tuple[Path, str]:
    name, _, language = spec.rpartition(":") if ":" in spec else (spec, "", "")
    path = Path(name)
    if not language:
        found = language_of(path, path.read_bytes().decode("utf-8"))
        if found is None:
            raise SystemExit(f"{path}: unsupported extension; say FILE:LANGUAGE")
        language = found.name
    return path, language


def _summary(a: Agreement) -> str:
    if a.language == "rust":
        return _rust_summary(a)
    reference = len(a.reference)
    by_name = reference - len(a.missed)
    exact = by_name - len(a.misplaced)
    return (
        f"{a.path.name} ({a.language}): ctags {reference} functions with >= {a.min_body}-line "
        f"bodies; found by name {by_name} ({a.recall_by_name:.0%}), at the same place and "
        f"end {exact}; wrong bodies {len(a.wrong)}; extracted {len(a.extracted)} in all"
    )


def _rust_summary(a: Agreement) -> str:
    placed = [t for t in a.theirs if any(same_place(f, t) for f in a.extracted)]
    long = [f for f in a.extracted if f.body_length >= a.min_body]
    return (
        f"{a.path.name} (rust; ctags gives no end line): ctags {len(a.theirs)} multi-line "
        f"functions, {len(placed)} found at the same place; {len(long)} extracted with "
        f">= {a.min_body} body lines"
    )


def _details(a: Agreement) -> str:
    lines = [f"  missed: {t.name} line {t.line}" for t in a.missed]
    lines += [f"  elsewhere: {t.name} line {t.line}-{t.end}" for t in a.misplaced]
    lines += [
        f"  WRONG: {f.name} body {f.body_start}-{f.body_end}, ctags closes on {t.end}"
        for f, t in a.wrong
    ]
    lines += [
        f"  extractor only: {f.name} body {f.body_start}-{f.body_end}"
        for f in a.extracted
        if f.body_length >= a.min_body and not any(same_place(f, t) for t in a.theirs)
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

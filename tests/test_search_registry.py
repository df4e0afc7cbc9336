"""The engine registry and the `needle engines` command."""

from __future__ import annotations

import pytest

from needle_lib.cli import main
from needle_lib.commands.engines import engine_rows
from needle_lib.contract.schema import MODES_BEFORE_RECORDED
from needle_lib.errors import UsageError
from needle_lib.search import ENGINES, MissingAPIKey, UnknownEngine, make_engine
from needle_lib.search.registry import EngineModeError, tuned_modes

EXPECTED = {
    "keenable", "keenable-realtime", "exa", "exa-instant", "google", "bing", "brave",
    "parallel", "parallel-turbo", "tavily", "perplexity", "octen", "ceramic", "you",
}


def test_fourteen_engines_registered() -> None:
    assert set(ENGINES) == EXPECTED


def test_unknown_engine_lists_known_names() -> None:
    with pytest.raises(UnknownEngine) as info:
        make_engine("altavista", env={})
    assert "altavista" in str(info.value)
    for name in EXPECTED:
        assert name in str(info.value)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if not n.startswith("keenable")))
def test_missing_required_key_names_the_env_var(name: str) -> None:
    with pytest.raises(MissingAPIKey) as info:
        make_engine(name, env={ENGINES[name].key_env: "   "})
    assert info.value.engine == name
    assert info.value.env_var == ENGINES[name].key_env
    assert ENGINES[name].key_env in str(info.value)


@pytest.mark.parametrize("name", ["keenable", "keenable-realtime"])
def test_keenable_key_is_optional(name: str) -> None:
    assert make_engine(name, env={}).name == name


def test_base_url_override_per_engine() -> None:
    env = {"EXA_API_KEY": "k", "NEEDLE_EXA_INSTANT_BASE_URL": "http://127.0.0.1:8765/"}
    assert make_engine("exa-instant", env=env).base_url == "http://127.0.0.1:8765"
    assert make_engine("exa", env=env).base_url == "https://api.exa.ai"
    assert ENGINES["keenable-realtime"].base_url_env == "NEEDLE_KEENABLE_REALTIME_BASE_URL"


def test_invalid_tavily_depth_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="TAVILY_DEPTH must be one of"):
        make_engine("tavily", env={"TAVILY_API_KEY": "k", "TAVILY_DEPTH": "deepest"})


@pytest.mark.parametrize("locale", ["german", "de", "deu/de", "de/de/x", "d1/de"])
def test_invalid_serper_locale_is_a_clear_error(locale: str) -> None:
    with pytest.raises(ValueError, match=f"SERPER_LOCALE must be <country>/<language> such "
                                         f"as us/en or br/pt-br; got '{locale}'"):
        make_engine("google", env={"SERPER_API_KEY": "k", "SERPER_LOCALE": locale})


def test_engine_rows_report_set_without_values() -> None:
    rows = {row[0]: row for row in engine_rows({"EXA_API_KEY": "ex-123", "TAVILY_DEPTH": "fast"})}
    assert rows["exa"][2:] == ("built-in", "EXA_API_KEY", "set")
    assert rows["exa-instant"][1] == "instant"
    assert rows["google"][3:] == ("SERPER_API_KEY", "unset")
    assert rows["google"][1] == "us/en"  # the locale, until SERPER_LOCALE sets another
    assert rows["keenable"][4].startswith("unset (optional")
    assert rows["tavily"][1] == "fast"
    assert rows["searxng"][2:] == ("configs/engines/searxng.toml", "-",
                                   "not needed; NEEDLE_SEARXNG_BASE_URL unset")


def test_needle_engines_command_never_prints_key_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for spec in ENGINES.values():
        monkeypatch.delenv(spec.key_env, raising=False)
    monkeypatch.setenv("BRAVE_API_KEY", "brave-SECRET-value")
    assert main(["engines"]) == 0
    out = capsys.readouterr().out
    assert "brave-SECRET-value" not in out
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert set(lines) == EXPECTED | {"searxng"}
    assert lines["brave"].rstrip().endswith("set")
    assert lines["you"].rstrip().endswith("unset")


def test_a_bad_mode_is_one_usage_error_naming_the_variable_and_the_allowed_values() -> None:
    with pytest.raises(EngineModeError) as depth:
        tuned_modes(["exa", "tavily"], ENGINES, {"TAVILY_DEPTH": "deep"})
    assert str(depth.value) == ("engine tavily: TAVILY_DEPTH must be one of basic, advanced, "
                                "fast, ultra-fast; got 'deep'")
    assert isinstance(depth.value, UsageError)  # the plugin's exit 4, a command's exit 2
    with pytest.raises(EngineModeError, match=r"engine google: SERPER_LOCALE must be "
                                              r"<country>/<language>.*got 'german'"):
        tuned_modes(["google"], ENGINES, {"SERPER_LOCALE": "german"})
    # an engine the run does not ask is not checked
    assert tuned_modes(["exa"], ENGINES, {"TAVILY_DEPTH": "deep"}) == {}


def test_tuned_modes_are_the_env_tuned_engines_modes_normalised() -> None:
    env = {"TAVILY_DEPTH": " advanced ", "SERPER_LOCALE": "DE/de"}
    assert tuned_modes(["exa-instant", "tavily", "google", "brave"], ENGINES, env) == {
        "tavily": "advanced", "google": "de/de"}  # exa-instant's mode is its name's
    assert tuned_modes(["tavily", "google"], ENGINES, {}) == {"tavily": "basic",
                                                              "google": "us/en"}
    assert make_engine("google", env={"SERPER_API_KEY": "k", **env}).mode == "de/de"


def test_old_headers_read_as_the_registry_defaults_of_today() -> None:
    """``MODES_BEFORE_RECORDED`` is what old headers ran in; while the registry's defaults
    are the same, a new default run resumes an old one. A change of default must leave the
    migration table alone (old runs did run in the old default) and change this test."""
    defaults = {name: spec.mode for name, spec in ENGINES.items() if spec.mode_env}
    assert defaults == MODES_BEFORE_RECORDED


def test_needle_engines_marks_a_bad_mode() -> None:
    rows = {row[0]: row for row in engine_rows({"TAVILY_DEPTH": "deep",
                                                "SERPER_LOCALE": "BR/pt-BR"})}
    assert rows["tavily"][1] == "deep (invalid)"
    assert rows["google"][1] == "br/pt-br"

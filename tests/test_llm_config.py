"""Model configs: resolution order, layering, strict schema, API keys and their secrecy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from needle_lib.llm.config import DEFAULTS, load_dotenv_once, one_edit_apart, resolve_model
from needle_lib.paths import MODELS_DIR, REPO_ROOT
from needle_lib.tomlconf import ConfigError

SECRET = "sk-test-SECRET-value-123"


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # str, int, float and lists of str are valid TOML this way


def write_model(path: Path, **keys: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k} = {toml_value(v)}\n" for k, v in keys.items()), "utf-8")
    return path


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    write_model(tmp_path / "models" / "local.toml", name="org/local-model", max_tokens=1500)
    return tmp_path / "models"


# --- resolution order -------------------------------------------------------------------


def test_existing_file_path_wins_over_models_dir(models_dir: Path, tmp_path: Path) -> None:
    # Same stem as a config in models_dir: the explicit path must win.
    path = write_model(tmp_path / "elsewhere" / "local.toml", name="from-path")
    config = resolve_model(str(path), models_dir=models_dir)
    assert config.name == "from-path"
    assert config.source == f"file:{path}"
    assert config.key == "local"
    assert config.note is None


def test_stem_resolves_in_models_dir(models_dir: Path) -> None:
    config = resolve_model("local", models_dir=models_dir)
    assert config.name == "org/local-model"
    assert config.key == "local"
    assert config.label == "local"  # label defaults to the config stem
    assert config.source == f"file:{models_dir / 'local.toml'}"


def test_unknown_value_is_a_raw_model_id_with_a_note(models_dir: Path) -> None:
    config = resolve_model("vendor/some model:q4", models_dir=models_dir)
    assert config.name == "vendor/some model:q4"
    assert config.key == "vendor_some_model_q4"
    assert config.source == "raw"
    assert config.max_tokens == DEFAULTS["max_tokens"]
    assert config.base_url == DEFAULTS["base_url"]
    assert config.note is not None
    assert "raw model id" in config.note and "local" in config.note


def test_missing_toml_path_is_an_error_naming_it(models_dir: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=r"nope\.toml"):
        resolve_model(str(missing), models_dir=models_dir)


# --- layering ---------------------------------------------------------------------------


def test_layering_defaults_then_file_then_overrides(models_dir: Path) -> None:
    config = resolve_model(
        "local",
        {"max_tokens": 99, "base_url": "http://127.0.0.1:9/v1", "timeout": None, "temperature": 1},
        models_dir=models_dir,
    )
    assert config.max_tokens == 99  # override beats the file's 1500
    assert config.base_url == "http://127.0.0.1:9/v1"
    assert config.timeout == DEFAULTS["timeout"]  # None = flag not given
    assert config.temperature == 1.0 and isinstance(config.temperature, float)


def test_think_override_turns_off_both_thinking_switches(tmp_path: Path) -> None:
    path = write_model(tmp_path / "m.toml", name="m", suppress_thinking=True, prefill_no_think=True)
    assert resolve_model(str(path)).prefill_no_think
    thinking = resolve_model(str(path), {"think": True})
    assert not thinking.suppress_thinking and not thinking.prefill_no_think
    unchanged = resolve_model(str(path), {"think": False})
    assert unchanged.suppress_thinking and unchanged.prefill_no_think


# --- strict schema ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({"name": "m", "max_token": 5}, "unknown key 'max_token'"),
        ({"name": "m", "max_tokens": "5"}, "key 'max_tokens' must be int"),
        ({"name": "m", "prefill_no_think": 1}, "key 'prefill_no_think' must be bool"),
        ({"label": "x"}, "missing required key 'name'"),
        ({"name": "m", "stop": ["ok", 3]}, "key 'stop' must be a list of non-empty strings"),
        ({"name": "m", "max_tokens": 0}, "key 'max_tokens' must be at least 1"),
        ({"name": "m", "concurrency": 0}, "key 'concurrency' must be at least 1"),
        ({"name": "m", "base_url": "localhost:1234"}, "key 'base_url' must start with http"),
    ],
)
def test_bad_file_errors_name_file_and_key(tmp_path: Path, keys: dict, expected: str) -> None:
    path = write_model(tmp_path / "bad.toml", **keys)
    with pytest.raises(ConfigError) as info:
        resolve_model(str(path))
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_bad_override_is_named(models_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"model overrides.*'max_tokens' must be int"):
        resolve_model("local", {"max_tokens": "lots"}, models_dir=models_dir)
    with pytest.raises(ConfigError, match="unknown key 'name'"):
        resolve_model("local", {"name": "other"}, models_dir=models_dir)


# --- API keys -------------------------------------------------------------------------


def test_api_key_literal(tmp_path: Path) -> None:
    path = write_model(tmp_path / "m.toml", name="m", api_key="not-needed")
    assert resolve_model(str(path)).resolve_api_key() == "not-needed"


def test_no_key_configured_means_none(tmp_path: Path) -> None:
    assert resolve_model(str(write_model(tmp_path / "m.toml", name="m"))).resolve_api_key() is None


def test_api_key_file_is_read_and_stripped(tmp_path: Path) -> None:
    key_file = tmp_path / "k.key"
    key_file.write_text(f"  {SECRET}\n", "utf-8")
    path = write_model(tmp_path / "m.toml", name="m", api_key_file=str(key_file))
    assert resolve_model(str(path)).resolve_api_key() == SECRET


def test_override_api_key_beats_key_file(tmp_path: Path) -> None:
    path = write_model(tmp_path / "m.toml", name="m", api_key_file=str(tmp_path / "missing.key"))
    assert resolve_model(str(path), {"api_key": "cli-key"}).resolve_api_key() == "cli-key"


def test_missing_key_file_error_names_path(tmp_path: Path) -> None:
    missing = tmp_path / "missing.key"
    path = write_model(tmp_path / "m.toml", name="m", api_key_file=str(missing))
    with pytest.raises(ConfigError, match=r"missing\.key"):
        resolve_model(str(path)).resolve_api_key()


def test_relative_key_file_resolves_against_repo_root(tmp_path: Path) -> None:
    path = write_model(tmp_path / "m.toml", name="m", api_key_file=".secrets/no-such-test.key")
    with pytest.raises(ConfigError) as info:
        resolve_model(str(path)).resolve_api_key()
    assert str(REPO_ROOT / ".secrets" / "no-such-test.key") in str(info.value)


def test_api_key_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEEDLE_TEST_KEY", SECRET)
    path = write_model(tmp_path / "m.toml", name="m", api_key_env="NEEDLE_TEST_KEY")
    assert resolve_model(str(path)).resolve_api_key() == SECRET


def test_missing_env_var_error_names_variable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("NEEDLE_TEST_ABSENT", raising=False)
    path = write_model(tmp_path / "m.toml", name="m", api_key_env="NEEDLE_TEST_ABSENT")
    with pytest.raises(ConfigError, match="NEEDLE_TEST_ABSENT"):
        resolve_model(str(path)).resolve_api_key()


def test_key_file_then_env_var_and_the_error_names_every_source(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key_file = tmp_path / "k.key"
    path = write_model(
        tmp_path / "m.toml", name="m", api_key_file=str(key_file), api_key_env="NEEDLE_TEST_CHAIN"
    )
    monkeypatch.delenv("NEEDLE_TEST_CHAIN", raising=False)
    with pytest.raises(ConfigError) as info:
        resolve_model(str(path)).resolve_api_key()
    message = str(info.value)
    assert f"api_key_file {key_file} does not exist" in message
    assert "NEEDLE_TEST_CHAIN (api_key_env) is not set" in message and "--api-key" in message
    monkeypatch.setenv("NEEDLE_TEST_CHAIN", "from-env")
    assert resolve_model(str(path)).resolve_api_key() == "from-env"
    key_file.write_text("from-file\n", "utf-8")
    assert resolve_model(str(path)).resolve_api_key() == "from-file"
    assert (
        resolve_model(str(path)).request_shape()["auth"]
        == f"file:{key_file} or env:NEEDLE_TEST_CHAIN"
    )


def test_shipped_hosted_configs_accept_the_providers_env_var() -> None:
    """A user with OPENAI_API_KEY exported and no .secrets/ file can run gpt-5.5."""
    for name, variable in (
        ("gpt-5.5", "OPENAI_API_KEY"),
        ("claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
    ):
        config = resolve_model(name)
        assert config.api_key_env == variable and config.api_key_file is not None


def test_dotenv_supplies_key_but_exported_variable_wins(tmp_path: Path, monkeypatch) -> None:
    # setenv+delenv registers both variables with monkeypatch so teardown removes what
    # python-dotenv writes into os.environ.
    for var in ("NEEDLE_DOTENV_ONLY", "NEEDLE_DOTENV_EXPORTED"):
        monkeypatch.setenv(var, "placeholder")
        monkeypatch.delenv(var)
    monkeypatch.setenv("NEEDLE_DOTENV_EXPORTED", "from-shell")
    env_file = tmp_path / ".env"
    env_file.write_text("NEEDLE_DOTENV_ONLY=from-file\nNEEDLE_DOTENV_EXPORTED=from-file\n")
    load_dotenv_once([env_file])
    only = write_model(tmp_path / "a.toml", name="m", api_key_env="NEEDLE_DOTENV_ONLY")
    exported = write_model(tmp_path / "b.toml", name="m", api_key_env="NEEDLE_DOTENV_EXPORTED")
    assert resolve_model(str(only)).resolve_api_key() == "from-file"
    assert resolve_model(str(exported)).resolve_api_key() == "from-shell"


def test_key_never_in_repr_or_request_shape(tmp_path: Path) -> None:
    key_file = tmp_path / "k.key"
    key_file.write_text(SECRET, "utf-8")
    from_file = resolve_model(
        str(write_model(tmp_path / "f.toml", name="m", api_key_file=str(key_file)))
    )
    literal = resolve_model(str(write_model(tmp_path / "l.toml", name="m")), {"api_key": SECRET})
    for config in (from_file, literal):
        assert config.resolve_api_key() == SECRET
        assert SECRET not in repr(config) and SECRET not in str(config)
        assert SECRET not in json.dumps(config.request_shape())
    assert from_file.request_shape()["auth"] == f"file:{key_file}"
    assert literal.request_shape()["auth"] == "literal"


def test_request_shape_records_every_request_knob(tmp_path: Path) -> None:
    path = write_model(
        tmp_path / "m.toml",
        name="gpt-x",
        label="GPT X",
        base_url="https://api.example.test",
        api_key_env="SOME_VAR",
        temperature=1.0,
        max_tokens=8000,
        use_max_completion_tokens=True,
        reasoning_effort="none",
        prefill_no_think=True,
        suppress_thinking=True,
        stop=["</s>"],
        timeout=30.0,
        concurrency=8,
    )
    shape = resolve_model(str(path)).request_shape()
    assert shape == {
        "model": "gpt-x",
        "label": "GPT X",
        "config": "m",
        "source": f"file:{path}",
        "base_url": "https://api.example.test",
        "auth": "env:SOME_VAR",
        "temperature": 1.0,
        "token_field": "max_completion_tokens",
        "max_tokens": 8000,
        "reasoning_effort": "none",
        "prefill_no_think": True,
        "suppress_thinking": True,
        "stop": ["</s>"],
        "timeout": 30.0,
        "concurrency": 8,
    }


# --- shipped configs ------------------------------------------------------------------


def test_shipped_configs_load_with_distinct_labels() -> None:
    configs = [resolve_model(p.stem) for p in sorted(MODELS_DIR.glob("*.toml"))]
    assert {c.key for c in configs} >= {
        "reference",
        "qwen3-4b-2507",
        "qwen36-35b",
        "gemma-4-31b-4bit",
        "gemma-4-31b-bf16",
        "qwen36-27b-mlx-4bit",
        "qwen36-27b-mlx-8bit",
        "gpt-5.5",
        "claude-sonnet-4-6",
    }
    labels = [c.label for c in configs]
    assert len(labels) == len(set(labels))
    by_key = {c.key: c for c in configs}
    assert by_key["reference"].is_reference
    assert not any(c.is_reference for k, c in by_key.items() if k != "reference")
    assert by_key["gpt-5.5"].token_field == "max_completion_tokens"
    assert all(by_key[k].stop for k in ("gemma-4-31b-4bit", "gemma-4-31b-bf16"))


@pytest.mark.parametrize("typo", ["qwen36-53b", "qwen36_35b", "Qwen36-35b", "qwen36-35"])
def test_a_model_name_one_edit_from_a_config_asks_did_you_mean(typo: str) -> None:
    with pytest.raises(ConfigError, match="did you mean qwen36-35b\\?"):
        resolve_model(typo)


_NEAR = st.text(alphabet="ab-5", max_size=6)


@given(_NEAR, _NEAR)
def test_one_edit_apart_is_an_optimal_string_alignment_distance_of_one(a: str, b: str) -> None:
    assert one_edit_apart(a, b) == (OSA.distance(a, b) == 1)


@given(_NEAR, st.integers(min_value=0, max_value=6), st.sampled_from("ab-5x"))
def test_one_edit_apart_finds_every_single_edit(word: str, at: int, char: str) -> None:
    """Insertions, deletions, substitutions and swaps of neighbours, made on purpose (random
    pairs are rarely one edit apart)."""
    at = min(at, len(word))
    edits = [word[:at] + char + word[at:], word[:at] + word[at + 1 :]]
    if at < len(word):
        edits.append(word[:at] + char + word[at + 1 :])
    if at + 1 < len(word):
        edits.append(word[:at] + word[at + 1] + word[at] + word[at + 2 :])
    for edited in edits:
        assert one_edit_apart(word, edited) == (OSA.distance(word, edited) == 1)


def test_resolving_a_raw_model_id_loads_no_string_distance_library() -> None:
    code = (
        "import sys; from needle_lib.llm.config import resolve_model; "
        "resolve_model('zero'); print('rapidfuzz' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    assert proc.stdout.strip() == "False"


@pytest.mark.parametrize("raw", ["my-org/some-model-7b", "qwen3-8b-2507", "gpt-5.4"])
def test_a_raw_model_id_is_used_with_a_note(raw: str) -> None:
    """Far from every config, or a sibling of one (another digit): a model, not a typo."""
    config = resolve_model(raw)
    assert config.source == "raw" and config.note and "raw model id" in config.note


# --- the deadline bound (issue 32, item 8) ------------------------------------------------

@pytest.mark.parametrize("timeout", [1e10, 86_400.5])
def test_a_timeout_beyond_a_day_is_refused_at_load(tmp_path: Path, timeout: float) -> None:
    """``--request-timeout 1e10`` passed "positive and finite", then every request died in
    an OverflowError (time_t); it is a usage error naming the key, in a file and a flag."""
    with pytest.raises(ConfigError, match=r"model overrides: key 'timeout' must be at most "
                                          r"86400 seconds"):
        resolve_model("m", {"timeout": timeout})
    path = write_model(tmp_path / "m.toml", name="m", timeout=timeout)
    with pytest.raises(ConfigError, match=rf"{path}: key 'timeout' must be at most 86400"):
        resolve_model(str(path))


def test_a_timeout_of_a_day_is_still_accepted() -> None:
    assert resolve_model("m", {"timeout": 86_400.0}).timeout == 86_400.0


def test_every_config_key_is_a_declared_setting() -> None:
    """``_check_values`` converts to ``ModelOverrides``, which drops undeclared keys: a key
    added to the schema must be added to the settings too."""
    from typing import get_type_hints

    from needle_lib.llm.config import FILE_SCHEMA, OVERRIDE_SCHEMA, ModelOverrides

    declared = set(get_type_hints(ModelOverrides))
    assert set(FILE_SCHEMA) | set(OVERRIDE_SCHEMA) <= declared

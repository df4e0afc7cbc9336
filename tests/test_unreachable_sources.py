"""Offline: a generator whose source host refuses the connection stops at once with one line
naming the host and the override, instead of backing off page after page (scholar and news
have their own tests beside their generators; these are the benches that share
``run_generation``)."""

from __future__ import annotations

import pytest

from needle_lib.cli import main
from needle_lib.testing.loopback import closed_port_url

BENCHES = {
    "finance": ("SEC", "SEC_DATA", "WIKIDATA", "GLEIF"),
    "legal": ("COURTLISTENER", "ECFR"),
}


@pytest.mark.parametrize("bench", BENCHES)
def test_generate_against_a_closed_port_stops_with_one_line(
    bench: str, tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = closed_port_url()
    for name in BENCHES[bench]:
        monkeypatch.setenv(f"NEEDLE_{name}_BASE_URL", dead)
    monkeypatch.setenv("NEEDLE_LLM_BASE_URL", dead)
    for key in ("NEEDLE_CONTACT", "COURTLISTENER_API_TOKEN", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(key, "offline@example.org" if key == "NEEDLE_CONTACT" else "x")
    out = tmp_path / "gold.jsonl"
    assert main([bench, "generate", "--out", str(out)]) == 1
    assert not out.exists()
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"needle {bench} generate: ")
    assert f"cannot reach {dead.removeprefix('http://')} (connection refused)" in last
    assert any(f"NEEDLE_{name}_BASE_URL" in last for name in BENCHES[bench])

"""Third-party fixtures are exactly what their provenance record says, license included."""

import hashlib
import tomllib

import pytest

from needle_lib.paths import FIXTURES_DIR

RECORDS = tomllib.loads((FIXTURES_DIR / "PROVENANCE.toml").read_text())["file"]


@pytest.mark.parametrize("record", RECORDS, ids=[r["path"] for r in RECORDS])
def test_fixture_matches_its_provenance(record):
    data = (FIXTURES_DIR / record["path"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == record["sha256"]
    assert (FIXTURES_DIR / record["license_file"]).is_file()
    assert record["version"] and record["source"]


def test_license_headers_are_intact():
    jquery = (FIXTURES_DIR / "jquery.js").read_text()
    assert "jQuery JavaScript Library v3.7.1" in jquery[:300]
    assert "Released under the MIT license" in jquery[:300]

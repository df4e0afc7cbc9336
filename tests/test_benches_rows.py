"""A row's day: the judge's "today" for a generated query is the hour it was made in."""

from __future__ import annotations

from datetime import date

import pytest

from needle_lib.benches.rows import row_day
from needle_lib.tomlconf import ConfigError


@pytest.mark.parametrize(
    ("hour_ts", "day"),
    [
        ("2026-07-02T14:00:00+00:00", date(2026, 7, 2)),
        ("2026-07-02T23:30:00-05:00", date(2026, 7, 3)),  # the UTC date
        ("2026-07-02T14:00:00", date(2026, 7, 2)),  # naive means UTC
        (None, None),
        ("", None),
    ],
)
def test_row_day_is_the_utc_date_of_hour_ts(hour_ts: str | None, day: date | None) -> None:
    assert row_day({"query_id": "q", "hour_ts": hour_ts}) == day


def test_a_malformed_hour_ts_names_the_query() -> None:
    with pytest.raises(ConfigError, match=r"query q7: hour_ts 'yesterday' is not an ISO"):
        row_day({"query_id": "q7", "hour_ts": "yesterday"})

"""Every eval run leaves a self-contained HTML report, unless ``--html`` names one.

Unit-test runs (``pytest`` over ``tests/``) are left alone: only runs that select
something under ``evals/`` get a default report path.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from needle_lib.paths import REPO_ROOT
from needle_lib.plugin.session import results_dir

EVALS_DIR = REPO_ROOT / "evals"


def _selects_evals(config: pytest.Config) -> bool:
    for arg in config.args:
        path = Path(arg.split("::")[0])
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
        try:
            path.resolve().relative_to(EVALS_DIR)
        except ValueError:
            continue
        return True
    return False


def report_name(config: pytest.Config) -> str:
    """``<time>-<selection>.html``: sortable, and says what the run selected."""
    parts = [
        *(config.getoption("corpus") or []),
        *(config.getoption("model") or []),
        config.getoption("keyword") or "",
    ]
    selection = re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(p for p in parts if p)).strip("_")
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{selection[:60] or 'all'}.html"


def default_html_report(config: pytest.Config) -> None:
    if config.getoption("htmlpath", None) or not _selects_evals(config):
        return
    config.option.htmlpath = str(results_dir(config) / "reports" / report_name(config))
    config.option.self_contained_html = True

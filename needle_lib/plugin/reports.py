"""Every eval run that runs cases leaves a self-contained HTML report, unless ``--html``
names one.

Unit-test runs (``pytest`` over ``tests/``) are left alone: only runs that select
something under ``evals/`` get a default report path. ``--collect-only`` and runs that
selected nothing get none: an empty report per invocation only buries the real ones.
"""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import pytest

from needle_lib.paths import EVALS_DIR
from needle_lib.plugin.session import results_dir, selected_paths


def _selects_evals(config: pytest.Config) -> bool:
    return any(path.is_relative_to(EVALS_DIR) for path in selected_paths(config))


def report_name(config: pytest.Config) -> str:
    """``<time>-<selection>.html``: sortable, and says what the run selected."""
    parts = [
        *(config.getoption("corpus") or []),
        *(config.getoption("model") or []),
        config.getoption("keyword") or "",
    ]
    selection = re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(p for p in parts if p)).strip("_")
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{selection[:60] or 'all'}.html"


default_report_key = pytest.StashKey[bool]()


def default_html_report(config: pytest.Config) -> None:
    if (
        config.getoption("htmlpath", None)
        or config.getoption("collectonly", False)
        or not _selects_evals(config)
    ):
        return
    config.option.htmlpath = str(results_dir(config) / "reports" / report_name(config))
    config.option.self_contained_html = True
    config.stash[default_report_key] = True


def drop_default_report(config: pytest.Config) -> None:
    """Unregister pytest-html's writer before it writes, if the report is Needle's default
    (one the user named with ``--html`` is always written)."""
    if not config.stash.get(default_report_key, False):
        return
    drop_html_report(config)
    with contextlib.suppress(OSError):  # pytest-html made the directory; leave none behind
        Path(config.option.htmlpath).parent.rmdir()


def drop_html_report(config: pytest.Config) -> None:
    """Unregister pytest-html's writer (if it runs) before it writes: a run with nothing to
    report, or one stopped by a full disk, where writing would only fail again."""
    from pytest_html.basereport import BaseReport

    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, BaseReport):
            config.pluginmanager.unregister(plugin)

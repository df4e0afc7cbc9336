"""Every eval run that runs cases leaves a self-contained HTML report, unless ``--html``
names one.

Only eval runs load the plugin (``evals/conftest.py``), so unit-test runs never get one.
``--collect-only`` gets none: an empty report per invocation only buries the real ones.
"""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import pytest

from needle_lib.plugin.session import results_dir


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
    if config.getoption("htmlpath", None) or config.getoption("collectonly", False):
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

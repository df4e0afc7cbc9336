"""``RunSettings`` from a command line, without pytest: the options ``add_options``
declares, parsed by argparse as pytest's parser does."""

from __future__ import annotations

import argparse
from typing import Any

from needle_lib.options import RunSettings, add_options


class _Dests:
    """An option parser that records each option's ``dest`` and default, as argparse
    derives them."""

    def __init__(self) -> None:
        self.parser = argparse.ArgumentParser()

    def getgroup(self, name: str, description: str = "") -> _Dests:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.parser.add_argument(*names, **attrs)


def parsed(*args: str) -> argparse.Namespace:
    recorder = _Dests()
    add_options(recorder)
    return recorder.parser.parse_args(list(args))


def settings_of(*args: str) -> RunSettings:
    return RunSettings.from_namespace(parsed(*args))

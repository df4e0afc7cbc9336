"""A progress line on stderr for long generation runs (minutes of polite, rate-limited I/O).

On a terminal it redraws one line in place; in a log (CI, a pipe) it writes a plain line at
most every 10 % so the log stays readable. stdout is never touched: ``--out -`` writes the
generated rows there. ``done`` counts what was actually produced: a run that fetched nothing
ends at 0/N (with its counters saying why), never at a full bar.
"""

from __future__ import annotations

import sys
from typing import TextIO


class Progress:
    def __init__(self, label: str, total: int, *, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = max(0, total)
        self.done = 0
        self.counters: dict[str, int] = {}
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._last_decile = -1
        self._written: str | None = None

    def count(self, name: str, n: int = 1) -> None:
        """Bump a named counter shown beside the bar (requests, drops, errors…)."""
        self.counters[name] = self.counters.get(name, 0) + n

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def line(self) -> str:
        width = 24
        filled = width * self.done // self.total if self.total else width
        extras = "  ".join(f"{k} {v}" for k, v in self.counters.items())
        bar = "#" * filled + "." * (width - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total}" + (f"  {extras}" if extras else "")

    def _draw(self) -> None:
        if self._tty:
            self._stream.write("\r" + self.line())
            self._stream.flush()
            return
        decile = 10 * self.done // self.total if self.total else 10
        if decile != self._last_decile:
            self._last_decile = decile
            self._write_line()

    def _write_line(self) -> None:
        self._written = self.line()
        self._stream.write(self._written + "\n")
        self._stream.flush()

    def close(self) -> None:
        """The final state on its own line (in a log: unless the last line already was it)."""
        if self._tty:
            self._stream.write("\r" + self.line() + "\n")
            self._stream.flush()
        elif self._written != self.line():
            self._write_line()

"""One exception root for everything Needle raises on purpose.

``NeedleError`` is what a caller catches to tell Needle's own, explained failures from bugs.
Under it, ``UsageError`` is bad input the user can fix (a config, an option, a gold row, a
dump file): the plugin turns it into pytest's usage error (exit 4) and the ``needle``
commands into one line and exit 2, always naming the file, key or case. Everything else
under the root is an infrastructure failure of a run (a server, an engine, a source, the
judge), which a case records as an ERROR. Classes that were ``ValueError``s before keep it
as a second base, so existing ``except ValueError`` handlers of file formats still apply.
"""

from __future__ import annotations


class NeedleError(Exception):
    """Root of every error Needle raises on purpose."""


class UsageError(NeedleError):
    """Input the user can fix; the message names the file, key, option or case."""


class GoldError(UsageError, ValueError):
    """A gold object that cannot be scored (missing or malformed field, unknown kind)."""

"""A disk that fills up mid-run: one line naming the file and the resume command, a distinct
exit status, and nothing lost that was already written.

Why: the controller writes a run file (and the latest view, or a search journal) after every
case. When the disk filled, the ``OSError`` escaped a pytest hook: an INTERNALERROR
traceback, exit status 1 (the status of an ordinary failed case, so CI read it as a quality
regression), and the latest view left behind the run file without a word about which file
held the run's cases.

Now the controller catches "no space" (``ENOSPC``, or ``EDQUOT``: a quota is a full disk
for this user), stops the run with ``pytest.exit`` and ``DISK_FULL_EXIT``, and writes
nothing more: no final dump or report rewrite, no HTML report (pytest-html would raise the
same error at the end), no journal removal. What was written stays as a killed run leaves
it (writes are atomic: the file holds the previous complete version), so ``--resume``
continues from it once there is space.
"""

from __future__ import annotations

import errno
import shlex
from collections.abc import Sequence

#: The exit status of a run stopped by a full disk: ENOSPC's errno (28 on Linux and macOS),
#: away from pytest's 0–5 so CI can tell "no space" from "cases failed" or "usage error".
DISK_FULL_EXIT = 28
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_no_space(exc: BaseException) -> bool:
    """Whether ``exc`` says a device (or this user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS


def resume_command(args: Sequence[str]) -> str:
    """The run's command line (pytest's arguments) with ``--resume``, quoted for the shell."""
    words = [str(arg) for arg in args]
    if "--resume" not in words:
        words.append("--resume")
    return shlex.join(["pytest", *words])


def disk_full_message(exc: OSError, args: Sequence[str]) -> str:
    """The one line a full disk gets: the file, the reason, what is kept, what to run."""
    where = exc.filename or "a result file"
    reason = exc.strerror or "no space left"
    return (f"needle: disk full writing {where} ({reason}): the run stopped; every case "
            f"written before is kept. Free some space, then resume: {resume_command(args)}")

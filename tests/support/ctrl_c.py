"""Children that answer Ctrl-C, whatever the shell that started the tests did.

A shell without job control starts a background command (``cmd &``) with SIGINT
ignored, and a Python started with SIGINT ignored never installs its Ctrl-C
handler. A test suite launched that way (a CI script sent to the background, a
nightly wrapper) hands the ignored disposition down to every child, so a test
that sends SIGINT to ``insync run`` or ``insync serve`` tests nothing but the
launcher: the run finishes its whole time limit, the server never stops. A
terminal's Ctrl-C reaches a foreground process whose SIGINT is the default, and
that is the case these tests are about.

:func:`with_default_sigint` wraps a command in a small Python that sets SIGINT
back to its default and then execs the command (the disposition survives exec).
It is not a ``preexec_fn``: that runs Python in a forked child of a process
with threads (servers, Kafka clients), which can deadlock.
"""

from __future__ import annotations

import sys

_TRAMPOLINE = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); " \
              "os.execv(sys.argv[1], sys.argv[1:])"


def with_default_sigint(argv: list[str]) -> list[str]:
    """``argv`` (its first item a path to an executable), started with SIGINT at default."""
    return [sys.executable, "-c", _TRAMPOLINE, *argv]

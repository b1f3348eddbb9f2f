"""The shell text a ``sh -c SCRIPT NAME ARG...`` argv stands for, for fakes that match text.

Scripts take every value as a positional argument (``cluster.remote.sh``); a
fake that answers commands by what they say reads them with the arguments put
back in, quoted, as a shell would see them. Values are never in the script's
own text: ``tests/cluster/test_hostile_values.py`` holds that.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_POSITIONAL = re.compile(r'"\$@"|"\$(\d)"|\$(\d)(?!\d)')


def script_text(argv: Sequence[str]) -> str:
    """``argv`` as one line of shell: a script with its ``$1``.. filled in, or the argv."""
    if tuple(argv[:2]) != ("sh", "-c") or len(argv) < 3:
        return shlex.join(argv)
    script, args = argv[2], list(argv[4:])

    def fill(m: re.Match[str]) -> str:
        if m.group(0) == '"$@"':
            return shlex.join(args)
        n = int(m.group(1) or m.group(2))
        value = args[n - 1] if 0 < n <= len(args) else ""
        glued = script[m.end():m.end() + 1] not in ("", " ", "\n", ";")
        return "" if value == "" and glued else shlex.quote(value)  # "$1"/x with $1 empty

    return _POSITIONAL.sub(fill, script)

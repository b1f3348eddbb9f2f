"""Which nemesis ops open and close each kind of fault, as the history records them.

One table for both sides: ``nemesis.package`` writes these ops, and reports
(``results.plot_data``) read them back as shaded bands. It lives here, with the
history's vocabulary, so reading a report never imports the fault machinery.
"""

from __future__ import annotations

from collections.abc import Mapping

#: kind -> (f of the op that starts the fault, f of the op that stops it)
FAULT_SPANS: Mapping[str, tuple[str, str]] = {
    "partition": ("start-partition", "stop-partition"),
    "kill": ("kill", "start"),
    "pause": ("pause", "resume"),
    "clock-bump": ("bump-clock", "reset-clock"),
    "clock-freeze": ("freeze-clock", "reset-clock"),
    "clock-strobe": ("strobe-clock", "reset-clock"),
    "packet": ("start-packet", "stop-packet"),
}

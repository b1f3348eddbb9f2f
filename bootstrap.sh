#!/usr/bin/env bash
# Creates .venv/ at the repository root with insync and its test tools installed.
# Everything else a run needs (Docker engine, node image, Kafka jars) is set up
# on demand by insync itself, the first time a command needs it.
#
# One line per step; pip's own output (build warnings included) is shown only
# when a step fails, in full, so that a first run reads as a checklist.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "bootstrap: insync needs Python 3.11 or newer as \$PYTHON or python3 (found: $("$PY" --version 2>&1))" >&2
  exit 1
fi
LOG=$(mktemp "${TMPDIR:-/tmp}/insync-bootstrap.XXXXXX")
trap 'rm -f "$LOG"' EXIT

# step DESCRIPTION COMMAND...: runs COMMAND quietly; on failure prints its whole output.
step() {
  local what=$1; shift
  echo "bootstrap: $what"
  if ! "$@" >"$LOG" 2>&1; then
    echo "bootstrap: failed: $what ($*); its output:" >&2
    cat "$LOG" >&2
    exit 1
  fi
}

if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PY" --version 2>&1)" "$PY" -m venv .venv
fi
step "upgrading pip" .venv/bin/python -m pip install --upgrade pip
step "installing insync and its test tools into .venv (pip, editable)" \
  .venv/bin/python -m pip install -e '.[dev]'
echo "bootstrap: .venv ready ($(.venv/bin/insync --version 2>/dev/null || echo insync))"

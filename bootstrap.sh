#!/usr/bin/env bash
# Creates .venv/ at the repository root with insync and its test tools installed.
# Everything else a run needs (Docker engine, node image, Kafka jars) is set up
# on demand by insync itself, the first time a command needs it.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "bootstrap: insync needs Python 3.11 or newer as \$PYTHON or python3 (found: $("$PY" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
echo "bootstrap: .venv ready ($(.venv/bin/insync --version 2>/dev/null || echo insync))"

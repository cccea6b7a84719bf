#!/usr/bin/env bash
# Sets up a virtualenv in .venv with rocmlint (editable) and its test dependencies, runs ruff (lint and
# format check) and mypy, then the tests.
# pytest's exit code passes through: 5 (no test collected) fails on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
# An editable install compiles nothing, and with PYTHONDONTWRITEBYTECODE set Python never writes the bytecode
# caches itself: every run would compile rocmlint's and the rules' modules from source again (0.2 CPU-s before
# the first worker starts). A normal install (`pip install .`) writes them; this does the same here.
.venv/bin/python -m compileall -q rocmlint rules

# System tools some tests drive for real: hipcc (Debian's HIP 5.2, for `rocmlint verify` and the C++ fix
# tests) and chromium (renders the HTML report). Installed when missing, as root, with apt; elsewhere the
# tests that need them skip and say why (in CI, where CI is set, they fail instead).
missing=()
command -v hipcc >/dev/null 2>&1 || missing+=(hipcc)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1)) \
        || echo "scripts/test.sh: could not install ${missing[*]}; the tests that need them will say so" >&2
fi

# Style and types first (configured in pyproject.toml): any finding fails the run before the tests start.
.venv/bin/ruff check --no-fix .
.venv/bin/ruff format --check .
.venv/bin/mypy

exec .venv/bin/python -m pytest "$@"

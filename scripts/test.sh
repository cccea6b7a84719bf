#!/usr/bin/env bash
# Sets up a virtualenv in .venv with rocmlint (editable) and its test dependencies, then runs the tests.
# pytest's exit code passes through: 5 (no test collected) fails on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"

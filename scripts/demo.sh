#!/usr/bin/env bash
# Sets up a virtualenv in .venv with rocmlint, then checks the bundled example project.
# Exit code 1 is expected: it means rocmlint found ROCm hazards (0 = none found, 2 = usage error).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
cd fixtures/train_pkg
exec ../../.venv/bin/rocmlint check "$@" .

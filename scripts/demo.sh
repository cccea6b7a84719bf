#!/usr/bin/env bash
# Sets up a virtualenv in .venv with rocmlint, then checks the bundled example project.
# Exit code 1 is expected: it means rocmlint found ROCm hazards (0 = none found, 2 = usage error).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
# An editable install compiles nothing, and with PYTHONDONTWRITEBYTECODE set Python never writes the bytecode
# caches itself: every run would compile rocmlint's and the rules' modules from source again (0.2 CPU-s before
# the first worker starts). A normal install (`pip install .`) writes them; this does the same here.
.venv/bin/python -m compileall -q rocmlint rules
cd fixtures/train_pkg
exec ../../.venv/bin/rocmlint check "$@" .

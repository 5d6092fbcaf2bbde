"""Shared test set-up. Paths and helpers live in tests/helpers.py (import them from there);
the browser fixtures live in tests/browser/conftest.py, so unit runs never build web/dist."""

from __future__ import annotations

import sys

from tests.helpers import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

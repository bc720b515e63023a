"""Tests of the developer tools.

`tools` is a folder of the checkout, not an installed package, and pytest's importlib mode does
not put the repository root on `sys.path`; the noxfile does the same for itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

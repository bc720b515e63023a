"""Shared setup for the umbrella's tests.

The persistent compilation cache is on by default; tests must never read or write the user's
real cache, so this process (and the processes tests start, which inherit the environment) uses
a fresh temporary directory, as lamina-runtime's tests do.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

TEST_CACHE_DIR = tempfile.mkdtemp(prefix="lamina-test-cache-")
atexit.register(shutil.rmtree, TEST_CACHE_DIR, ignore_errors=True)
# Both: LAMINA_COMPILATION_CACHE_DIR outranks a JAX_COMPILATION_CACHE_DIR the developer may
# have set for JAX; LAMINA_CACHE_DIR is the default's own variable.
os.environ["LAMINA_COMPILATION_CACHE_DIR"] = TEST_CACHE_DIR
os.environ["LAMINA_CACHE_DIR"] = TEST_CACHE_DIR

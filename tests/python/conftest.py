"""Shared fixtures: where the checkout is, and the examples' NumPy cases
(tests/numpy/check_examples.py, whose references are written in NumPy
independently of the .tc code)."""
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, os.path.join(ROOT, "tests", "numpy"))


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def examples():
    return EXAMPLES

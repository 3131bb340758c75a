"""Subgroup-matrix conformance test suite: the harness."""

__version__ = "0.1.0"

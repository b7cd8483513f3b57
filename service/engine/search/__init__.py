"""Searching one table: the exhaustive pass and its kernels, top-k selection, exact rescoring,
analogy terms, 3CosMul, output scoring, and candidates from an approximate index.

Imports service.engine.tables (and files, errors); imported by indexes, analysis and the
engine's faces (served.py, session.py).
"""

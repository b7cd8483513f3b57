"""Searching one table: the exhaustive pass and its kernels, top-k selection, exact rescoring,
analogy terms, 3CosMul, output scoring, and candidates from an approximate index.

The exact search is one module a step, in the order it runs: store.py (the rows), kernels.py
(the pass; its float32 products in products.py), selection.py (the candidates), rescoring.py
(the float64 rescoring). Imports run one way (pyproject's contract): kernels.py imports
products.py and selection.py, and every step may import store.py; store.py imports none of them.

Imports service.engine.tables (and files, errors); imported by indexes, analysis and the
engine's faces (served.py, session.py).
"""

"""Approximate indexes over a table's life: building, saving and reading, measured recall.

Imports service.engine.search and below.
"""

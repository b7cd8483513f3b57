"""Per-process machinery around the engine: the batchers that coalesce searches, the answer cache.

Imports the leaves and the engine only.
"""

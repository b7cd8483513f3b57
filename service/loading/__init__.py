"""Configured tables into the registry: reading specs (through the cache directory), reloads and
added tables, the approximate index each table gets and its background build.

Imports the leaves and the engine only.
"""

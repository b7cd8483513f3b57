"""The routes that are not the catalogue's queries (health, the explorer, tables, admin), and
the text embeddings', registered like the queries (service/api/query.py)."""

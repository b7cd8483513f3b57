"""The one place a query is answered: the door (parse, validate, resolve the table, cache,
answer or the error envelope), and one module per feature that turns a validated request into
engine calls and the answer's JSON. Both HTTP paths (the direct path and the routes) and the
CLI call it.

Imports service.runtime, service.loading, the leaves and the engine; never FastAPI or the server.
"""

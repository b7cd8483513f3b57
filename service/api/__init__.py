"""The HTTP app: create_app (app.py), the query routes registered from the operation catalogue
(query.py), the other thin routes (routes/), the edge every request meets first (edge.py:
metrics, access, body, in flight, the direct path), the keys (keys.py), typed dependencies and
the error handlers. Every query route calls service.operations.door.

Imports service.operations and below; imported by service.server and the tests.
"""

"""The HTTP app: create_app (app.py), thin routes (routes/), ASGI middleware (middleware/),
typed dependencies and the error handlers. Every query route calls service.operations.door.

Imports service.operations and below; imported by service.server and the tests.
"""

"""Plain ASGI middleware: access control, admission (bodies, in-flight), metrics, the fast path."""

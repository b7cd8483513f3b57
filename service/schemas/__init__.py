"""The HTTP API's request and response models, one module per feature (the same word as in
service/operations/ and service/api/routes/). Hard ceilings on sizes live here.

A leaf above the engine: imports pydantic, service.config and itself only.
"""

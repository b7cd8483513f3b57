"""The process around the app: serve, the guarded connection protocol, graceful signals,
workers on one port; the tables load beside a serving uvicorn, the app answering 503 meanwhile.

Imports service.api and below; imported only by service.cli (serve).
"""

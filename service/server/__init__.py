"""The process around the app: serve, the guarded connection protocol, graceful signals,
workers on one port, the 503 responder while tables load.

Imports service.api and below; imported only by service.cli (serve).
"""

"""The embedding-service commands. Imports service.operations, service.loading and below;
service.server only for `serve`.
"""

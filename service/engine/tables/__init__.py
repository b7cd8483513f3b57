"""The table and its parts: rows, vocabulary, metadata, tokenizer, checkpoints, prepared folders.

Imported by the rest of the engine; imports only service.engine.errors and service.engine.files.
"""

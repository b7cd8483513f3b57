"""The engine: tables, their loaders, search, approximate indexes and analysis, in numpy, FAISS
and tokenizers alone. It never imports fastapi, starlette, prometheus or anything of the service
outside service/engine/, so it works from a notebook without a server:

    from service.engine.session import Session      # gensim-like: most_similar, similarity
    from service.engine.loaders import load_table   # any supported file -> EmbeddingTable
    from service.engine.tables.embedding import embed   # a static model's texts -> vectors

Layers, lowest first (each imports only those below it): errors and files; tables; loaders and
search; indexes and analysis; served.py (a table ready to answer) and session.py.
"""

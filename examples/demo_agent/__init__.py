"""A small agent app (FastAPI, SQLite, a streaming chat endpoint) to run ``abt simulate`` on."""

"""``python -m examples.keyword_model``: serve the keyword model."""

from .server import main

main()

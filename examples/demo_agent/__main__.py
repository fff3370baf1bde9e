"""``python -m examples.demo_agent``: serve the demo agent."""

from .app import main

main()

"""A keyword model: an OpenAI-compatible chat endpoint that answers by rules, for the tutorials."""

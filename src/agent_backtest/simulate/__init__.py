"""Simulate: test conversations played through a live agent, each judged with owner and evidence.

* :mod:`~agent_backtest.simulate.models`: flows (what to say), what is recorded per turn and per
  conversation, and the judge's verdict;
* the runner plays flows through a target (an HTTP agent, a Python callable, or the built-in agent
  loop) and appends each conversation as it finishes; the judge decides each one afterwards.
"""

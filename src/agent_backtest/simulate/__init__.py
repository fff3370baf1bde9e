"""Simulate: test conversations played through a live agent, each judged with owner and evidence.

* :mod:`~agent_backtest.simulate.models`: flows (what to say), what is recorded per turn and per
  conversation, and the judge's verdict;
* :mod:`~agent_backtest.simulate.flows` reads a flows file; :mod:`~.selection` chooses the flows
  and decides which may change the agent's data; :mod:`~.isolation` keeps those from changing it
  for the next flow;
* :mod:`~.targets` talks to the agent (HTTP with JSON or server-sent events, or a Python
  callable); :mod:`~.conversation` plays one flow, scripted or with a simulated user;
* :mod:`~.plan` checks everything before a run writes or sends; :mod:`~.run` plays the flows
  into the run directory, appending each conversation (:mod:`~.log`) and its canonical session
  (:mod:`~.sessions`) as it ends; the judge decides each one afterwards.
"""

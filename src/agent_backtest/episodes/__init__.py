"""What simulate and bench have in common: an episode between an agent, its tools and a user.

One agent loop (:mod:`.agent_loop`: the agent's model and its tools, until it answers), one
simulated user (:mod:`.simulated_user`) and how both ask their models (:mod:`.calls`). A
simulate conversation through the built-in ``model`` target and a bench episode are the same
loop; an HTTP target is the same conversation with the agent outside.
"""

"""The driver: one goal's shell — load, decide, route, act, record, append — under its lease.

``act`` performs the core's routed actions on an ``Actor``; ``runner`` is the actor of
real runs (planner and worker runs, the lease, continuations, waiting); ``append`` folds
events into the view and appends them with the summary, rebuilding on a conflict;
``goals`` is the library behind the goal commands (create, inspect, govern, ``tick``);
``goalfile`` turns a goal file into ``goal.created``.
"""

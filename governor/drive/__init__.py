"""The driver: one goal's shell — load, decide, act, record, append — under its lease.

``runner`` holds the effects behind each action (planner and worker runs, the lease,
the appends); ``goals`` is the library behind the goal commands (create, inspect,
govern, tick); ``goalfile`` turns a goal file into ``goal.created``.
"""

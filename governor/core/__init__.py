"""The pure core: events, policy, classification, projections and decisions.

Rules:
    * No I/O, no clock, no randomness, no logging, no environment. Time, ids and
      observations are arguments; values come back. ``tests/test_core_purity.py``
      keeps it so.
    * The shell loads events, the core decides, the shell acts, the core turns what
      was observed into events, and the shell appends them.
"""

"""Output: every ``--json`` shape (``records``) and every text rendering (``text``), defined once.

Rules:
    * Pure functions: values in, plain data or text out; no I/O.
    * Every shape that carries a decision carries its ``rule``, except one line of
      ``replay --json``, whose keys SPEC §9 pins (the text replay shows the rule).
"""

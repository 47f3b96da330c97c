"""The rules: everything that decides a goal lives here, each set of rules one table.

Rules:
    * ``decide`` (``decide.py``) is the decision: the goal rules (``goal.py``, SPEC §6.2)
      over the work item rules (``work.py``, SPEC §6.1), then the fleet rules
      (``fleet.py``, SPEC §11.10) and the budget stops that ask (``budget.py``, SPEC
      §13.6-13.7). Each table's rows are the code that runs: the first row that answers
      decides, and its name travels with the answer (``Decision.rule``).
    * ``Decider`` (``decider.py``) takes the same decision after every event, deciding
      again only what the event changed (its ``DecisionMemo``, ``memo.py``): its speed
      comes from the data the rules read, never from a second copy of a rule.
    * Nothing outside this package decides a rule (``tests/core/test_rules_once.py``).
"""

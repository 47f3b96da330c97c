"""The pure core: events, policy, classification, projections and decisions.

Rules:
    * No I/O, no clock, no randomness, no logging, no environment. Time, ids and
      observations are arguments; values come back. ``tests/test_core_purity.py``
      keeps it so.
    * The shell loads events, the core decides, the shell acts, the core turns what
      was observed into events, and the shell appends them.
    * No import circle: each module imports only modules before it in the reading order
      below (``tests/test_layers.py`` keeps it so, ``TYPE_CHECKING`` imports included).

Read in this order (top down, starting from ``decide``: each module imports only modules
after it; ``docs/architecture.md`` gives each module a line):
    the rules: rules.decide, rules.goal, rules.work, rules.fleet, rules.budget
    decision values: decision, ledger
    recording: record_budget, record_park, record_work, record, record_head
    the fold: charges, history, proposal, headroom, fold, fold_steps, view
    the wire: wire.codec, wire.upcast, wire.encoder, wire.decoder, wire.derive, wire.generate, wire.ahead, wire.derived_code, wire.forms, wire.checks
    upstream health: outage_text, accounts, upstream
    events: pools, pool_limits, events, budget_events, work_events, event_fields
    what a run left: proof, reclassify, absence, classify, wire_evidence, evidence, prices, observation
    limits: budgets, policy_input, policy
    words and numbers: remedy, upstream_text, credentials, signature, durations, numbers, limits, spelling, text

Then what takes a decision (each imports only the modules above and those before it here):
    taking a decision: rules.memo, rules.decider, route, question, blockers, summary, verbs, commands
"""

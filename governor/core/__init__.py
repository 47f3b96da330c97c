"""The pure core: events, policy, classification, projections and decisions.

Rules:
    * No I/O, no clock, no randomness, no logging, no environment. Time, ids and
      observations are arguments; values come back. ``tests/test_core_purity.py``
      keeps it so.
    * The shell loads events, the core decides, the shell acts, the core turns what
      was observed into events, and the shell appends them.
    * No import circle: each module imports only modules before it in the reading order
      below (``tests/test_layers.py`` keeps it so, ``TYPE_CHECKING`` imports included).

Read in this order (bottom up; ``docs/architecture.md`` gives each module a line):
    words and numbers: text, spelling, limits, numbers, durations, signature, credentials, upstream_text, remedy
    limits: policy, policy_input, budgets
    what a run left: observation, prices, evidence, wire_evidence, classify, absence, reclassify, proof
    events: event_fields, work_events, budget_events, events, pool_limits, pools
    upstream health: upstream, accounts, outage_text
    the wire: wire.checks, wire.forms, wire.generate, wire.derive, wire.decoder, wire.encoder, wire.upcast, wire.codec
    the fold: view, fold_steps, fold, hot, headroom, proposal, history, charges
    recording: record_head, record, record_work, record_park, record_budget
    decisions: ledger, decision, work, memo, parking, budget_stops, goal_rules, dispatch, decide, decider, route, question, blockers, summary
    operator verbs: verbs, commands
"""

"""The wire's generated functions, compiled ahead (issue 36): do not edit, it is derived.

Written by ``governor.core.wire.ahead.module_text`` from the functions a read derives
(``GOVERNOR_UPDATE_GOLDEN=1 pytest tests/core/test_ahead.py`` writes it again); each
factory takes the values its function reads and returns it. A function whose source
changed is compiled from its source instead (``ahead.made``).
"""
# ruff: noqa
# mypy: ignore-errors
# fmt: off

def _8382679067fdbdc6(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_AcceptanceReport(s):
        values = {'satisfied': s.satisfied, 'unsatisfied': s.unsatisfied, 'unknown': s.unknown}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_AcceptanceReport


def _374ca8da64b64830(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_AttemptContinued(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id, 'attempt': s.attempt, 'run_id': s.run_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_AttemptContinued


def _7b10c0f9ffbc7251(b13, b14, b17, fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_AttemptFinished(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id, 'attempt': s.attempt, 'run_id': s.run_id, 'outcome': s.outcome, 'failure_class': s.failure_class, 'error': s.error, 'evidence': (None if (v13 := s.evidence) is None else b13(v13)), 'acceptance': (None if (v14 := s.acceptance) is None else b14(v14)), 'cost_usd': s.cost_usd, 'retry_after_s': s.retry_after_s, 'usage': (None if (v17 := s.usage) is None else b17(v17)), 'signature': s.signature, 'account': s.account, 'resets_at': s.resets_at}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_AttemptFinished


def _e1d849eca369dd1c(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_AttemptStarted(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id, 'attempt': s.attempt, 'run_id': s.run_id, 'trigger': s.trigger}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_AttemptStarted


def _f57147381e0d0d50(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_BudgetDeclined(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'budget': s.budget}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_BudgetDeclined


def _f4d8860756eb218c(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_BudgetExpired(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'budget': s.budget, 'usd': s.usd, 'attempts': s.attempts}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_BudgetExpired


def _ec7084fd98de1ca5(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_BudgetGranted(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'budget': s.budget, 'usd': s.usd, 'attempts': s.attempts, 'expires_at': s.expires_at, 'rule': s.rule}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_BudgetGranted


def _64cd785d6dbd2aae(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_BudgetRaised(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'ledger': s.ledger, 'work_id': s.work_id, 'to': s.to}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_BudgetRaised


def _9b394fc8f98d3618(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_BudgetRequested(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'budget': s.budget, 'usd': s.usd, 'attempts': s.attempts, 'renews_at': s.renews_at}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_BudgetRequested


def _3631116c6e90613c(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_ClaudeFacts(s):
        values = {'lines': s.lines, 'malformed': s.malformed, 'others': s.others, 'inits': s.inits, 'mcp_servers': s.mcp_servers, 'results': s.results, 'after_result': s.after_result, 'is_error': s.is_error, 'status': s.status, 'synthetic_errors': s.synthetic_errors, 'connection': s.connection, 'num_turns': s.num_turns, 'output_tokens': s.output_tokens, 'cost_usd': s.cost_usd, 'permission_denials': s.permission_denials, 'requests_begun': s.requests_begun, 'start_output_tokens': s.start_output_tokens, 'delta_output_tokens': s.delta_output_tokens, 'effects': s.effects, 'output': s.output, 'refusal': s.refusal, 'overrides': s.overrides, 'version': s.version, 'retries': s.retries, 'retry_count': s.retry_count, 'rate_limit': s.rate_limit}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_ClaudeFacts


def _ddda3ca60f2b4a48(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_CodexFacts(s):
        values = {'events': s.events, 'malformed': s.malformed, 'completed': s.completed, 'failed': s.failed, 'tool_items': s.tool_items, 'text_items': s.text_items, 'unknown_items': s.unknown_items, 'reconnecting': s.reconnecting, 'missing_key': s.missing_key, 'code': s.code, 'trace_complete': s.trace_complete, 'requests': s.requests, 'statuses': s.statuses, 'sse_events': s.sse_events, 'sse_kinds': s.sse_kinds, 'tool_calls': s.tool_calls, 'sampling_requests': s.sampling_requests, 'sampling_retries': s.sampling_retries}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_CodexFacts


def _f099df1d0275b491(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Disagreement(s):
        values = {'text_class': s.text_class, 'text_rule': s.text_rule, 'cli': s.cli}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Disagreement


def _1d8787a008267695(b6, b7, b8, b9, fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Evidence(s):
        values = {'effects': s.effects, 'output': s.output, 'refusal': s.refusal, 'source': s.source, 'ref': s.ref, 'rule': s.rule, 'partial': (None if (v6 := s.partial) is None else b6(v6)), 'tries': (None if (v7 := s.tries) is None else b7(v7)), 'observation': (None if (v8 := s.observation) is None else b8(v8)), 'disagreement': (None if (v9 := s.disagreement) is None else b9(v9))}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Evidence


def _dcfe690cc557f16b(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_GoalCancelled(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_GoalCancelled


def _ca495b156f735d9c(b11, fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_GoalCreated(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'title': s.title, 'objective': s.objective, 'acceptance': s.acceptance, 'policy': s.policy, 'profiles': b11(s.profiles), 'planner': s.planner, 'worker': s.worker, 'pools': s.pools}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_GoalCreated


def _a07ed2acbc75ed3d(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_GoalParked(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'upstream': s.upstream, 'profile': s.profile, 'since': s.since, 'until': s.until}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_GoalParked


def _3103931b81ba7b48(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_GoalResumed(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_GoalResumed


def _644b3e8395787074(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Grants(s):
        values = {'auto_usd': s.auto_usd, 'auto_attempts': s.auto_attempts, 'expires_s': s.expires_s}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Grants


def _e50ff81bae294903(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Milestone(s):
        values = {'title': s.title, 'objective': s.objective}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Milestone


def _0a0612615ce4594e(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Partial(s):
        values = {'bytes': s.bytes, 'sha256': s.sha256}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Partial


def _ebe0100f273e62ca(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanApplied(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id, 'work_ids': s.work_ids}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanApplied


def _2cf6985bb8fa39e4(b9, fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanCompleted(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id, 'cost_usd': s.cost_usd, 'usage': (None if (v9 := s.usage) is None else b9(v9))}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanCompleted


def _c04a01c56837bfdc(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanContinued(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanContinued


def _0a8aa7d205ea4554(b10, b13, fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanFailed(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id, 'failure_class': s.failure_class, 'error': s.error, 'evidence': (None if (v10 := s.evidence) is None else b10(v10)), 'retry_after_s': s.retry_after_s, 'cost_usd': s.cost_usd, 'usage': (None if (v13 := s.usage) is None else b13(v13)), 'signature': s.signature, 'account': s.account, 'resets_at': s.resets_at}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanFailed


def _e7628e9e3a6c0803(b10, b11, b12, b14, fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanProposed(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id, 'decision': s.decision, 'rationale': s.rationale, 'work': b10(s.work), 'milestone': (None if (v11 := s.milestone) is None else b11(v11)), 'evidence': (None if (v12 := s.evidence) is None else b12(v12)), 'cost_usd': s.cost_usd, 'usage': (None if (v14 := s.usage) is None else b14(v14))}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanProposed


def _938f0fdb2018542e(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanRejected(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanRejected


def _286132b04da8c030(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_PlanRequested(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'plan_id': s.plan_id, 'sequence': s.sequence, 'trigger': s.trigger, 'fingerprint': s.fingerprint}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_PlanRequested


def _e29282e3f867a68b(b11, b20, d11, fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Policy(s):
        values = {'max_replans': s.max_replans, 'max_uncharged_replans': s.max_uncharged_replans, 'max_plan_records': s.max_plan_records, 'max_attempts': s.max_attempts, 'max_uncharged_attempts': s.max_uncharged_attempts, 'max_continuations': s.max_continuations, 'max_total_attempts': s.max_total_attempts, 'max_work_items_per_plan': s.max_work_items_per_plan, 'max_total_work_items': s.max_total_work_items, 'max_milestones': s.max_milestones, 'max_parallel_work': s.max_parallel_work, 'upstream_backoff': (d11 if s.upstream_backoff is d11 else b11(s.upstream_backoff)), 'auto_apply': s.auto_apply, 'accept_passing': s.accept_passing, 'retry_blocked': s.retry_blocked, 'max_runtime_s': s.max_runtime_s, 'max_cost_usd': s.max_cost_usd, 'max_outage_wait_s': s.max_outage_wait_s, 'max_quota_wait_s': s.max_quota_wait_s, 'max_same_failures': s.max_same_failures, 'grants': (None if (v20 := s.grants) is None else b20(v20))}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Policy


def _f728033e97780b5a(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Price(s):
        values = {'input_per_mtok': s.input_per_mtok, 'output_per_mtok': s.output_per_mtok, 'cached_input_per_mtok': s.cached_input_per_mtok}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Price


def _c88a0413804c60cb(b13, fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Profile(s):
        values = {'harness': s.harness, 'model': s.model, 'instructions': s.instructions, 'timeout_s': s.timeout_s, 'max_attempts': s.max_attempts, 'env': s.env, 'args': s.args, 'probe': s.probe, 'reserve_usd': s.reserve_usd, 'upstream': s.upstream, 'relay': s.relay, 'base_url_env': s.base_url_env, 'account': s.account, 'price': (None if (v13 := s.price) is None else b13(v13))}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Profile


def _d42efc154aaef797(b10, b11, b12, fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_RawObservation(s):
        values = {'timed_out': s.timed_out, 'stopped': s.stopped, 'spawn_errno': s.spawn_errno, 'vendor_status': s.vendor_status, 'vendor_code': s.vendor_code, 'credential': s.credential, 'billing': s.billing, 'connection': s.connection, 'connection_detail': s.connection_detail, 'answered_before': s.answered_before, 'claude': (None if (v10 := s.claude) is None else b10(v10)), 'codex': (None if (v11 := s.codex) is None else b11(v11)), 'wire': (None if (v12 := s.wire) is None else b12(v12))}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_RawObservation


def _883b7c95ce5478b9(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Tries(s):
        values = {'count': s.count, 'classes': s.classes, 'vendor_retries': s.vendor_retries, 'last_error': s.last_error}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Tries


def _d9916357e1cba61c(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_UpstreamBackoff(s):
        values = {'initial_s': s.initial_s, 'factor': s.factor, 'max_s': s.max_s}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_UpstreamBackoff


def _23be881d003283af(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_Usage(s):
        values = {'input_tokens': s.input_tokens, 'output_tokens': s.output_tokens, 'cached_input_tokens': s.cached_input_tokens}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_Usage


def _d041db542de35d0f(b0, b4, fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WireFacts(s):
        values = {'requests': b0(s.requests), 'total': s.total, 'responded': s.responded, 'content': s.content, 'usage': (None if (v4 := s.usage) is None else b4(v4)), 'agent': s.agent, 'gated': s.gated, 'own_effects': s.own_effects, 'failed': s.failed}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WireFacts


def _f2b941dadc009f68(b16, fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WireRequest(s):
        values = {'method': s.method, 'path': s.path, 'model': s.model, 'ended': s.ended, 'detail': s.detail, 'ttfb_ms': s.ttfb_ms, 'status': s.status, 'error_type': s.error_type, 'error_code': s.error_code, 'retry_after_s': s.retry_after_s, 'resets_at': s.resets_at, 'phrase': s.phrase, 'window': s.window, 'limits': s.limits, 'events': s.events, 'content': s.content, 'usage': (None if (v16 := s.usage) is None else b16(v16)), 'bytes_up': s.bytes_up, 'bytes_down': s.bytes_down}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WireRequest


def _3fad8f753aefe52d(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WorkAccepted(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WorkAccepted


def _2a19bf2f0eeee82d(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WorkCancelled(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WorkCancelled


def _15d1a99baea80ff4(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WorkCreated(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id, 'plan_id': s.plan_id, 'title': s.title, 'objective': s.objective, 'acceptance': s.acceptance, 'depends_on': s.depends_on, 'profile': s.profile, 'max_attempts': s.max_attempts, 'max_uncharged_attempts': s.max_uncharged_attempts}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WorkCreated


def _af0ead6eca91859c(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WorkReopened(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WorkReopened


def _e84e7bbaf33a24fc(fields_set, k6, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WorkRetried(s):
        values = {'schema_version': s.schema_version, 'goal_id': s.goal_id, 'seq': s.seq, 'at': s.at, 'actor': s.actor, 'reason': s.reason, 'type': k6, 'work_id': s.work_id}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WorkRetried


def _1b16f32be6dd0b6b(fields_set, model, new, set_dict, set_extra, set_fields_set, set_private):
    def build_WorkSpec(s):
        values = {'key': s.key, 'title': s.title, 'objective': s.objective, 'acceptance': s.acceptance, 'depends_on': s.depends_on, 'profile': s.profile}
        instance = new(model)
        set_dict(instance, values)
        set_fields_set(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance
    return build_WorkSpec


def _44c278d5d1c10388():
    def encode_AcceptanceReport(e):
        d = {'satisfied': e.satisfied, 'unsatisfied': e.unsatisfied, 'unknown': e.unknown}
        return d
    return encode_AcceptanceReport


def _52b1a52f2de16bba():
    def encode_AttemptContinued(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        v8 = e.attempt
        d['attempt'] = v8
        v9 = e.run_id
        d['run_id'] = v9
        return d
    return encode_AttemptContinued


def _5b0f13d52b20e1fb(encode_AcceptanceReport, encode_Evidence, encode_Usage):
    def encode_AttemptFinished(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        v8 = e.attempt
        d['attempt'] = v8
        v9 = e.run_id
        d['run_id'] = v9
        v10 = e.outcome
        d['outcome'] = v10
        if (v11 := e.failure_class) is not None:
            d['class'] = v11
        if (v12 := e.error) is not None:
            d['error'] = v12
        if (v13 := e.evidence) is not None:
            d['evidence'] = (None if v13 is None else encode_Evidence(v13))
        if (v14 := e.acceptance) is not None:
            d['acceptance'] = (None if v14 is None else encode_AcceptanceReport(v14))
        if (v15 := e.cost_usd) is not None:
            d['cost_usd'] = v15
        if (v16 := e.retry_after_s) is not None:
            d['retry_after_s'] = v16
        if (v17 := e.usage) is not None:
            d['usage'] = (None if v17 is None else encode_Usage(v17))
        if (v18 := e.signature) is not None:
            d['signature'] = v18
        if (v19 := e.account) is not None:
            d['account'] = v19
        if (v20 := e.resets_at) is not None:
            d['resets_at'] = v20
        return d
    return encode_AttemptFinished


def _3014f02e925a87d9():
    def encode_AttemptStarted(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        v8 = e.attempt
        d['attempt'] = v8
        v9 = e.run_id
        d['run_id'] = v9
        v10 = e.trigger
        d['trigger'] = v10
        return d
    return encode_AttemptStarted


def _de36bdedc5f6d55a():
    def encode_BudgetDeclined(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.budget
        d['budget'] = v7
        return d
    return encode_BudgetDeclined


def _a41e814f0aa87652():
    def encode_BudgetExpired(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.budget
        d['budget'] = v7
        if (v8 := e.usd) is not None:
            d['usd'] = v8
        if (v9 := e.attempts) is not None:
            d['attempts'] = v9
        return d
    return encode_BudgetExpired


def _b7f09d5f04ed5189():
    def encode_BudgetGranted(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.budget
        d['budget'] = v7
        if (v8 := e.usd) is not None:
            d['usd'] = v8
        if (v9 := e.attempts) is not None:
            d['attempts'] = v9
        if (v10 := e.expires_at) is not None:
            d['expires_at'] = v10
        if (v11 := e.rule) is not None:
            d['rule'] = v11
        return d
    return encode_BudgetGranted


def _75a7254a6f4e6cb4():
    def encode_BudgetRaised(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.ledger
        d['ledger'] = v7
        if (v8 := e.work_id) is not None:
            d['work_id'] = v8
        v9 = e.to
        d['to'] = v9
        return d
    return encode_BudgetRaised


def _94edeaba85a6b48f():
    def encode_BudgetRequested(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.budget
        d['budget'] = v7
        if (v8 := e.usd) is not None:
            d['usd'] = v8
        if (v9 := e.attempts) is not None:
            d['attempts'] = v9
        if (v10 := e.renews_at) is not None:
            d['renews_at'] = v10
        return d
    return encode_BudgetRequested


def _984f25572f9dc038():
    def encode_ClaudeFacts(e):
        d = {'lines': e.lines, 'malformed': e.malformed, 'others': e.others, 'inits': e.inits, 'mcp_servers': e.mcp_servers, 'results': e.results, 'after_result': e.after_result, 'is_error': e.is_error}
        if (v8 := e.status) is not None:
            d['status'] = v8
        v9 = e.synthetic_errors
        d['synthetic_errors'] = v9
        if (v10 := e.connection) is not None:
            d['connection'] = v10
        if (v11 := e.num_turns) is not None:
            d['num_turns'] = v11
        if (v12 := e.output_tokens) is not None:
            d['output_tokens'] = v12
        if (v13 := e.cost_usd) is not None:
            d['cost_usd'] = v13
        if (v14 := e.permission_denials) is not None:
            d['permission_denials'] = v14
        v15 = e.requests_begun
        d['requests_begun'] = v15
        v16 = e.start_output_tokens
        d['start_output_tokens'] = v16
        v17 = e.delta_output_tokens
        d['delta_output_tokens'] = v17
        v18 = e.effects
        d['effects'] = v18
        v19 = e.output
        d['output'] = v19
        v20 = e.refusal
        d['refusal'] = v20
        v21 = e.overrides
        d['overrides'] = v21
        if (v22 := e.version) is not None:
            d['version'] = v22
        v23 = e.retries
        d['retries'] = v23
        v24 = e.retry_count
        d['retry_count'] = v24
        if (v25 := e.rate_limit) is not None:
            d['rate_limit'] = v25
        return d
    return encode_ClaudeFacts


def _60f37f8e1262f50a():
    def encode_CodexFacts(e):
        d = {'events': e.events, 'malformed': e.malformed, 'completed': e.completed, 'failed': e.failed, 'tool_items': e.tool_items, 'text_items': e.text_items, 'unknown_items': e.unknown_items, 'reconnecting': e.reconnecting}
        if (v8 := e.missing_key) is not None:
            d['missing_key'] = v8
        if (v9 := e.code) is not None:
            d['code'] = v9
        v10 = e.trace_complete
        d['trace_complete'] = v10
        v11 = e.requests
        d['requests'] = v11
        v12 = e.statuses
        d['statuses'] = v12
        v13 = e.sse_events
        d['sse_events'] = v13
        v14 = e.sse_kinds
        d['sse_kinds'] = v14
        v15 = e.tool_calls
        d['tool_calls'] = v15
        if (v16 := e.sampling_requests) is not None:
            d['sampling_requests'] = v16
        if (v17 := e.sampling_retries) is not None:
            d['sampling_retries'] = v17
        return d
    return encode_CodexFacts


def _afd924fa314d97ce():
    def encode_Disagreement(e):
        d = {}
        if (v0 := e.text_class) is not None:
            d['text_class'] = v0
        v1 = e.text_rule
        d['text_rule'] = v1
        if (v2 := e.cli) is not None:
            d['cli'] = v2
        return d
    return encode_Disagreement


def _a0c369c18c60b150(encode_Disagreement, encode_Partial, encode_RawObservation, encode_Tries):
    def encode_Evidence(e):
        d = {'effects': e.effects, 'output': e.output, 'refusal': e.refusal}
        if (v3 := e.source) is not None:
            d['source'] = v3
        if (v4 := e.ref) is not None:
            d['ref'] = v4
        if (v5 := e.rule) is not None:
            d['rule'] = v5
        if (v6 := e.partial) is not None:
            d['partial'] = (None if v6 is None else encode_Partial(v6))
        if (v7 := e.tries) is not None:
            d['tries'] = (None if v7 is None else encode_Tries(v7))
        if (v8 := e.observation) is not None:
            d['observation'] = (None if v8 is None else encode_RawObservation(v8))
        if (v9 := e.disagreement) is not None:
            d['disagreement'] = (None if v9 is None else encode_Disagreement(v9))
        return d
    return encode_Evidence


def _da44284e0bb8aab9():
    def encode_GoalCancelled(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        return d
    return encode_GoalCancelled


def _282813865fdfc273(encode_Policy, encode_Profile):
    def encode_GoalCreated(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.title
        d['title'] = v7
        v8 = e.objective
        d['objective'] = v8
        v9 = e.acceptance
        d['acceptance'] = v9
        v10 = e.policy
        d['policy'] = encode_Policy(v10)
        v11 = e.profiles
        d['profiles'] = {k0: encode_Profile(x0) for k0, x0 in v11.items()}
        v12 = e.planner
        d['planner'] = v12
        v13 = e.worker
        d['worker'] = v13
        if (v14 := e.pools) is not None:
            d['pools'] = v14
        return d
    return encode_GoalCreated


def _1350416ca4122dec():
    def encode_GoalParked(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.upstream
        d['upstream'] = v7
        v8 = e.profile
        d['profile'] = v8
        v9 = e.since
        d['since'] = v9
        v10 = e.until
        d['until'] = v10
        return d
    return encode_GoalParked


def _dbd0dcc74555a3fa():
    def encode_GoalResumed(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        return d
    return encode_GoalResumed


def _17f8d2ec7cc7ebd0():
    def encode_Grants(e):
        d = {'auto_usd': e.auto_usd, 'auto_attempts': e.auto_attempts}
        if (v2 := e.expires_s) is not None:
            d['expires_s'] = v2
        return d
    return encode_Grants


def _4d178c72e62a55ba():
    def encode_Milestone(e):
        d = {'title': e.title, 'objective': e.objective}
        return d
    return encode_Milestone


def _d524b8744e40168d():
    def encode_Partial(e):
        d = {'bytes': e.bytes, 'sha256': e.sha256}
        return d
    return encode_Partial


def _6490622e1d382a02():
    def encode_PlanApplied(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        v8 = e.work_ids
        d['work_ids'] = v8
        return d
    return encode_PlanApplied


def _96eef114dcb1d7da(encode_Usage):
    def encode_PlanCompleted(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        if (v8 := e.cost_usd) is not None:
            d['cost_usd'] = v8
        if (v9 := e.usage) is not None:
            d['usage'] = (None if v9 is None else encode_Usage(v9))
        return d
    return encode_PlanCompleted


def _be65c9b08cb570b7():
    def encode_PlanContinued(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        return d
    return encode_PlanContinued


def _798034a31868ec5d(encode_Evidence, encode_Usage):
    def encode_PlanFailed(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        if (v8 := e.failure_class) is not None:
            d['class'] = v8
        if (v9 := e.error) is not None:
            d['error'] = v9
        if (v10 := e.evidence) is not None:
            d['evidence'] = (None if v10 is None else encode_Evidence(v10))
        if (v11 := e.retry_after_s) is not None:
            d['retry_after_s'] = v11
        if (v12 := e.cost_usd) is not None:
            d['cost_usd'] = v12
        if (v13 := e.usage) is not None:
            d['usage'] = (None if v13 is None else encode_Usage(v13))
        if (v14 := e.signature) is not None:
            d['signature'] = v14
        if (v15 := e.account) is not None:
            d['account'] = v15
        if (v16 := e.resets_at) is not None:
            d['resets_at'] = v16
        return d
    return encode_PlanFailed


def _8f826dec81919720(encode_Evidence, encode_Milestone, encode_Usage, encode_WorkSpec):
    def encode_PlanProposed(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        v8 = e.decision
        d['decision'] = v8
        v9 = e.rationale
        d['rationale'] = v9
        v10 = e.work
        d['work'] = [encode_WorkSpec(x0) for x0 in v10]
        if (v11 := e.milestone) is not None:
            d['milestone'] = (None if v11 is None else encode_Milestone(v11))
        if (v12 := e.evidence) is not None:
            d['evidence'] = (None if v12 is None else encode_Evidence(v12))
        if (v13 := e.cost_usd) is not None:
            d['cost_usd'] = v13
        if (v14 := e.usage) is not None:
            d['usage'] = (None if v14 is None else encode_Usage(v14))
        return d
    return encode_PlanProposed


def _7140178f9ef03c42():
    def encode_PlanRejected(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        return d
    return encode_PlanRejected


def _1169608d6d7784a7():
    def encode_PlanRequested(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.plan_id
        d['plan_id'] = v7
        v8 = e.sequence
        d['sequence'] = v8
        v9 = e.trigger
        d['trigger'] = v9
        v10 = e.fingerprint
        d['fingerprint'] = v10
        return d
    return encode_PlanRequested


def _aee8cc0873acdb1d(encode_Grants, encode_UpstreamBackoff):
    def encode_Policy(e):
        d = {'max_replans': e.max_replans, 'max_uncharged_replans': e.max_uncharged_replans, 'max_plan_records': e.max_plan_records, 'max_attempts': e.max_attempts, 'max_uncharged_attempts': e.max_uncharged_attempts, 'max_continuations': e.max_continuations, 'max_total_attempts': e.max_total_attempts, 'max_work_items_per_plan': e.max_work_items_per_plan, 'max_total_work_items': e.max_total_work_items, 'max_milestones': e.max_milestones, 'max_parallel_work': e.max_parallel_work, 'upstream_backoff': encode_UpstreamBackoff(e.upstream_backoff), 'auto_apply': e.auto_apply, 'accept_passing': e.accept_passing, 'retry_blocked': e.retry_blocked, 'max_runtime_s': e.max_runtime_s}
        if (v16 := e.max_cost_usd) is not None:
            d['max_cost_usd'] = v16
        v17 = e.max_outage_wait_s
        d['max_outage_wait_s'] = v17
        if (v18 := e.max_quota_wait_s) is not None:
            d['max_quota_wait_s'] = v18
        if (v19 := e.max_same_failures) is not None:
            d['max_same_failures'] = v19
        if (v20 := e.grants) is not None:
            d['grants'] = (None if v20 is None else encode_Grants(v20))
        return d
    return encode_Policy


def _8de87a44187ae6e0():
    def encode_Price(e):
        d = {'input_per_mtok': e.input_per_mtok, 'output_per_mtok': e.output_per_mtok}
        if (v2 := e.cached_input_per_mtok) is not None:
            d['cached_input_per_mtok'] = v2
        return d
    return encode_Price


def _b98a865b58551101(encode_Price):
    def encode_Profile(e):
        d = {'harness': e.harness}
        if (v1 := e.model) is not None:
            d['model'] = v1
        if (v2 := e.instructions) is not None:
            d['instructions'] = v2
        v3 = e.timeout_s
        d['timeout_s'] = v3
        v4 = e.max_attempts
        d['max_attempts'] = v4
        v5 = e.env
        d['env'] = v5
        v6 = e.args
        d['args'] = v6
        if (v7 := e.probe) is not None:
            d['probe'] = v7
        if (v8 := e.reserve_usd) is not None:
            d['reserve_usd'] = v8
        if (v9 := e.upstream) is not None:
            d['upstream'] = v9
        if (v10 := e.relay) is not None:
            d['relay'] = v10
        if (v11 := e.base_url_env) is not None:
            d['base_url_env'] = v11
        if (v12 := e.account) is not None:
            d['account'] = v12
        if (v13 := e.price) is not None:
            d['price'] = (None if v13 is None else encode_Price(v13))
        return d
    return encode_Profile


def _c4ade5c40ce1defb(encode_ClaudeFacts, encode_CodexFacts, encode_WireFacts):
    def encode_RawObservation(e):
        d = {'timed_out': e.timed_out, 'stopped': e.stopped}
        if (v2 := e.spawn_errno) is not None:
            d['spawn_errno'] = v2
        if (v3 := e.vendor_status) is not None:
            d['vendor_status'] = v3
        if (v4 := e.vendor_code) is not None:
            d['vendor_code'] = v4
        v5 = e.credential
        d['credential'] = v5
        v6 = e.billing
        d['billing'] = v6
        if (v7 := e.connection) is not None:
            d['connection'] = v7
        if (v8 := e.connection_detail) is not None:
            d['connection_detail'] = v8
        if (v9 := e.answered_before) is not None:
            d['answered_before'] = v9
        if (v10 := e.claude) is not None:
            d['claude'] = (None if v10 is None else encode_ClaudeFacts(v10))
        if (v11 := e.codex) is not None:
            d['codex'] = (None if v11 is None else encode_CodexFacts(v11))
        if (v12 := e.wire) is not None:
            d['wire'] = (None if v12 is None else encode_WireFacts(v12))
        return d
    return encode_RawObservation


def _5e03012d0ff5fdb0():
    def encode_Tries(e):
        d = {'count': e.count, 'classes': e.classes, 'vendor_retries': e.vendor_retries}
        if (v3 := e.last_error) is not None:
            d['last_error'] = v3
        return d
    return encode_Tries


def _788b7b3214a37e3e():
    def encode_UpstreamBackoff(e):
        d = {'initial_s': e.initial_s, 'factor': e.factor, 'max_s': e.max_s}
        return d
    return encode_UpstreamBackoff


def _0b84425bb3f61b28():
    def encode_Usage(e):
        d = {}
        if (v0 := e.input_tokens) is not None:
            d['input_tokens'] = v0
        if (v1 := e.output_tokens) is not None:
            d['output_tokens'] = v1
        if (v2 := e.cached_input_tokens) is not None:
            d['cached_input_tokens'] = v2
        return d
    return encode_Usage


def _6aa627ded121332f(encode_Usage, encode_WireRequest):
    def encode_WireFacts(e):
        d = {'requests': [encode_WireRequest(x0) for x0 in e.requests], 'total': e.total, 'responded': e.responded, 'content': e.content}
        if (v4 := e.usage) is not None:
            d['usage'] = (None if v4 is None else encode_Usage(v4))
        if (v5 := e.agent) is not None:
            d['agent'] = v5
        v6 = e.gated
        d['gated'] = v6
        v7 = e.own_effects
        d['own_effects'] = v7
        if (v8 := e.failed) is not None:
            d['failed'] = v8
        return d
    return encode_WireFacts


def _518d121524e32cee(encode_Usage):
    def encode_WireRequest(e):
        d = {'method': e.method, 'path': e.path, 'model': e.model, 'ended': e.ended}
        if (v4 := e.detail) is not None:
            d['detail'] = v4
        if (v5 := e.ttfb_ms) is not None:
            d['ttfb_ms'] = v5
        if (v6 := e.status) is not None:
            d['status'] = v6
        if (v7 := e.error_type) is not None:
            d['error_type'] = v7
        if (v8 := e.error_code) is not None:
            d['error_code'] = v8
        if (v9 := e.retry_after_s) is not None:
            d['retry_after_s'] = v9
        if (v10 := e.resets_at) is not None:
            d['resets_at'] = v10
        if (v11 := e.phrase) is not None:
            d['phrase'] = v11
        if (v12 := e.window) is not None:
            d['window'] = v12
        v13 = e.limits
        d['limits'] = v13
        v14 = e.events
        d['events'] = v14
        v15 = e.content
        d['content'] = v15
        if (v16 := e.usage) is not None:
            d['usage'] = (None if v16 is None else encode_Usage(v16))
        v17 = e.bytes_up
        d['bytes_up'] = v17
        v18 = e.bytes_down
        d['bytes_down'] = v18
        return d
    return encode_WireRequest


def _9bf3dab127192b9d():
    def encode_WorkAccepted(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        return d
    return encode_WorkAccepted


def _37e773a687d880df():
    def encode_WorkCancelled(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        return d
    return encode_WorkCancelled


def _ff71654d0bd85066():
    def encode_WorkCreated(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        v8 = e.plan_id
        d['plan_id'] = v8
        v9 = e.title
        d['title'] = v9
        v10 = e.objective
        d['objective'] = v10
        v11 = e.acceptance
        d['acceptance'] = v11
        v12 = e.depends_on
        d['depends_on'] = v12
        v13 = e.profile
        d['profile'] = v13
        v14 = e.max_attempts
        d['max_attempts'] = v14
        v15 = e.max_uncharged_attempts
        d['max_uncharged_attempts'] = v15
        return d
    return encode_WorkCreated


def _5a3ba111159d2150():
    def encode_WorkReopened(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        return d
    return encode_WorkReopened


def _25bb8d33c4ce020b():
    def encode_WorkRetried(e):
        d = {'schema_version': e.schema_version, 'goal_id': e.goal_id, 'seq': e.seq, 'at': e.at, 'actor': e.actor}
        if (v5 := e.reason) is not None:
            d['reason'] = v5
        v6 = e.type
        d['type'] = v6
        v7 = e.work_id
        d['work_id'] = v7
        return d
    return encode_WorkRetried


def _c4b1ed67adb326c4():
    def encode_WorkSpec(e):
        d = {'key': e.key, 'title': e.title, 'objective': e.objective, 'acceptance': e.acceptance, 'depends_on': e.depends_on}
        if (v5 := e.profile) is not None:
            d['profile'] = v5
        return d
    return encode_WorkSpec


def _760b084fe76dee58(Doubt, UNSET):
    def finish_AcceptanceReport(s):
        return s
    return finish_AcceptanceReport


def _86ae096298f36532(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, m9, seen1, seen7, seen9, to_datetime):
    def finish_AttemptContinued(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        if (v9 := s.run_id) not in seen9:
            if m9(v9) is None:
                raise Doubt
            if len(seen9) >= LIMIT:
                seen9.clear()
            seen9.add(v9)
        return s
    return finish_AttemptContinued


def _40e9eb865fc95e7b(Doubt, LIMIT, UNSET, UTC, c20, datetime, doubt, from_iso, m1, m13_6_1, m7, m9, seen1, seen13_6_1, seen7, seen9, to_datetime):
    def finish_AttemptFinished(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        if (v9 := s.run_id) not in seen9:
            if m9(v9) is None:
                raise Doubt
            if len(seen9) >= LIMIT:
                seen9.clear()
            seen9.add(v9)
        if (v13 := s.evidence) is not None:
            if (v13_6 := v13.partial) is not None:
                if (v13_6_1 := v13_6.sha256) not in seen13_6_1:
                    if m13_6_1(v13_6_1) is None:
                        raise Doubt
                    if len(seen13_6_1) >= LIMIT:
                        seen13_6_1.clear()
                    seen13_6_1.add(v13_6_1)
        if (v20 := s.resets_at) is not None:
            s.resets_at = c20(v20)
        return s
    return finish_AttemptFinished


def _a08306acc96d258c(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, m9, seen1, seen7, seen9, to_datetime):
    def finish_AttemptStarted(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        if (v9 := s.run_id) not in seen9:
            if m9(v9) is None:
                raise Doubt
            if len(seen9) >= LIMIT:
                seen9.clear()
            seen9.add(v9)
        return s
    return finish_AttemptStarted


def _3b924b1a49cd53da(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0):
    def finish_BudgetDeclined(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_BudgetDeclined


def _78d5dab59aa468d9(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, seen1, to_datetime):
    def finish_BudgetExpired(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        return s
    return finish_BudgetExpired


def _43c31b27840a790a(Doubt, LIMIT, UNSET, UTC, c10, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0):
    def finish_BudgetGranted(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v10 := s.expires_at) is not None:
            s.expires_at = c10(v10)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_BudgetGranted


def _5bc4686cbc2fbe9b(Doubt, LIMIT, UNSET, UTC, c8, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0, validator1):
    def finish_BudgetRaised(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v8 := s.work_id) is not None:
            s.work_id = c8(v8)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        try:
            validator1(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_BudgetRaised


def _d0ccfaf273787844(Doubt, LIMIT, UNSET, UTC, c10, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0):
    def finish_BudgetRequested(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v10 := s.renews_at) is not None:
            s.renews_at = c10(v10)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_BudgetRequested


def _d57af011f1520426(Doubt, UNSET):
    def finish_ClaudeFacts(s):
        return s
    return finish_ClaudeFacts


def _98ed47018b48b656(Doubt, UNSET):
    def finish_CodexFacts(s):
        return s
    return finish_CodexFacts


def _17abd95f6e606a83(Doubt, UNSET):
    def finish_Disagreement(s):
        return s
    return finish_Disagreement


def _98627f61bbd28c58(Doubt, LIMIT, UNSET, m6_1, seen6_1):
    def finish_Evidence(s):
        if (v6 := s.partial) is not None:
            if (v6_1 := v6.sha256) not in seen6_1:
                if m6_1(v6_1) is None:
                    raise Doubt
                if len(seen6_1) >= LIMIT:
                    seen6_1.clear()
                seen6_1.add(v6_1)
        return s
    return finish_Evidence


def _0ba013519dc7ecbb(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, seen1, to_datetime):
    def finish_GoalCancelled(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        return s
    return finish_GoalCancelled


def _b8d8eb8d73d5f9cb(Doubt, LIMIT, UNSET, UTC, c10, c11, c14, d10, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0):
    def finish_GoalCreated(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if s.policy is UNSET:
            s.policy = d10
        else:
            s.policy = c10(s.policy)
        s.profiles = c11(s.profiles)
        if (v14 := s.pools) is not None:
            s.pools = c14(v14)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_GoalCreated


def _1b7edfc8a92b5f57(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0):
    def finish_GoalParked(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if ((k9 := len(v9 := s.since)) == 20 and v9[4:20:3] == '--T::Z') or (k9 == 27 and v9[4:20:3] == '--T::.' and v9[26] == 'Z'):
            try:
                s.since = from_iso(v9)
            except ValueError:
                raise Doubt from None
        else:
            s.since = (t9 if k9 <= 27 and (t9 := to_datetime(v9, datetime)).tzinfo is UTC else doubt())
        if ((k10 := len(v10 := s.until)) == 20 and v10[4:20:3] == '--T::Z') or (k10 == 27 and v10[4:20:3] == '--T::.' and v10[26] == 'Z'):
            try:
                s.until = from_iso(v10)
            except ValueError:
                raise Doubt from None
        else:
            s.until = (t10 if k10 <= 27 and (t10 := to_datetime(v10, datetime)).tzinfo is UTC else doubt())
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_GoalParked


def _948ba3be771a92fc(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, seen1, to_datetime, validator0):
    def finish_GoalResumed(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_GoalResumed


def _1b5ba4b8bb826e7e(Doubt, UNSET):
    def finish_Grants(s):
        return s
    return finish_Grants


def _3fc37f3b2934897c(Doubt, UNSET):
    def finish_Milestone(s):
        return s
    return finish_Milestone


def _2d6d1577c79faa36(Doubt, LIMIT, UNSET, m1, seen1):
    def finish_Partial(s):
        if (v1 := s.sha256) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        return s
    return finish_Partial


def _bb81f64c2c997da8(Doubt, LIMIT, UNSET, UTC, c8, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime):
    def finish_PlanApplied(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        s.work_ids = c8(s.work_ids)
        return s
    return finish_PlanApplied


def _5962794a37cd18cb(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime):
    def finish_PlanCompleted(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        return s
    return finish_PlanCompleted


def _32c4c4a080c4eafd(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime):
    def finish_PlanContinued(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        return s
    return finish_PlanContinued


def _37f3ff7dc07e863f(Doubt, LIMIT, UNSET, UTC, c16, datetime, doubt, from_iso, m1, m10_6_1, m7, seen1, seen10_6_1, seen7, to_datetime):
    def finish_PlanFailed(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        if (v10 := s.evidence) is not None:
            if (v10_6 := v10.partial) is not None:
                if (v10_6_1 := v10_6.sha256) not in seen10_6_1:
                    if m10_6_1(v10_6_1) is None:
                        raise Doubt
                    if len(seen10_6_1) >= LIMIT:
                        seen10_6_1.clear()
                    seen10_6_1.add(v10_6_1)
        if (v16 := s.resets_at) is not None:
            s.resets_at = c16(v16)
        return s
    return finish_PlanFailed


def _f203a11bed8e1175(Doubt, LIMIT, UNSET, UTC, c10, datetime, doubt, from_iso, m1, m12_6_1, m7, seen1, seen12_6_1, seen7, to_datetime, validator0):
    def finish_PlanProposed(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        s.work = c10(s.work)
        if (v12 := s.evidence) is not None:
            if (v12_6 := v12.partial) is not None:
                if (v12_6_1 := v12_6.sha256) not in seen12_6_1:
                    if m12_6_1(v12_6_1) is None:
                        raise Doubt
                    if len(seen12_6_1) >= LIMIT:
                        seen12_6_1.clear()
                    seen12_6_1.add(v12_6_1)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_PlanProposed


def _1a585964de59ca31(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime, validator0):
    def finish_PlanRejected(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_PlanRejected


def _a56658d0478711f7(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m10, m7, seen1, seen10, seen7, to_datetime):
    def finish_PlanRequested(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.plan_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        if (v10 := s.fingerprint) not in seen10:
            if m10(v10) is None:
                raise Doubt
            if len(seen10) >= LIMIT:
                seen10.clear()
            seen10.add(v10)
        return s
    return finish_PlanRequested


def _acd4eded51c2d76a(Doubt, UNSET, d11, validator0, validator11_0):
    def finish_Policy(s):
        if s.upstream_backoff is UNSET:
            s.upstream_backoff = d11
        else:
            v11 = s.upstream_backoff
            try:
                validator11_0(v11)
            except ValueError:
                raise Doubt from None
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_Policy


def _2a0b0cffc530ba0a(Doubt, UNSET):
    def finish_Price(s):
        return s
    return finish_Price


def _b7249eda2070fb69(Doubt, UNSET, c11, c5):
    def finish_Profile(s):
        s.env = c5(s.env)
        if (v11 := s.base_url_env) is not None:
            s.base_url_env = c11(v11)
        return s
    return finish_Profile


def _890feba12437b31f(Doubt, UNSET):
    def finish_RawObservation(s):
        return s
    return finish_RawObservation


def _848ece254940e892(Doubt, UNSET):
    def finish_Tries(s):
        return s
    return finish_Tries


def _23a6930f6921e3ff(Doubt, UNSET, validator0):
    def finish_UpstreamBackoff(s):
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_UpstreamBackoff


def _58214d988e1d1f33(Doubt, UNSET):
    def finish_Usage(s):
        return s
    return finish_Usage


def _abd32cdd2b9afb71(Doubt, UNSET):
    def finish_WireFacts(s):
        return s
    return finish_WireFacts


def _46c0b4ac8eff67f1(Doubt, UNSET):
    def finish_WireRequest(s):
        return s
    return finish_WireRequest


def _7b5757617a3e820b(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime):
    def finish_WorkAccepted(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        return s
    return finish_WorkAccepted


def _66aaee8181687f78(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime):
    def finish_WorkCancelled(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        return s
    return finish_WorkCancelled


def _ebabdcfb648f6a11(Doubt, LIMIT, UNSET, UTC, c12, datetime, doubt, from_iso, m1, m7, m8, seen1, seen7, seen8, to_datetime):
    def finish_WorkCreated(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        if (v8 := s.plan_id) not in seen8:
            if m8(v8) is None:
                raise Doubt
            if len(seen8) >= LIMIT:
                seen8.clear()
            seen8.add(v8)
        s.depends_on = c12(s.depends_on)
        return s
    return finish_WorkCreated


def _077169095a85585c(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime):
    def finish_WorkReopened(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        return s
    return finish_WorkReopened


def _d3f04308d1165163(Doubt, LIMIT, UNSET, UTC, datetime, doubt, from_iso, m1, m7, seen1, seen7, to_datetime, validator0):
    def finish_WorkRetried(s):
        if (v1 := s.goal_id) not in seen1:
            if m1(v1) is None:
                raise Doubt
            if len(seen1) >= LIMIT:
                seen1.clear()
            seen1.add(v1)
        if ((k3 := len(v3 := s.at)) == 20 and v3[4:20:3] == '--T::Z') or (k3 == 27 and v3[4:20:3] == '--T::.' and v3[26] == 'Z'):
            try:
                s.at = from_iso(v3)
            except ValueError:
                raise Doubt from None
        else:
            s.at = (t3 if k3 <= 27 and (t3 := to_datetime(v3, datetime)).tzinfo is UTC else doubt())
        if (v7 := s.work_id) not in seen7:
            if m7(v7) is None:
                raise Doubt
            if len(seen7) >= LIMIT:
                seen7.clear()
            seen7.add(v7)
        try:
            validator0(s)
        except ValueError:
            raise Doubt from None
        return s
    return finish_WorkRetried


def _268ad524b7dcae82(Doubt, LIMIT, UNSET, c4, m0, seen0):
    def finish_WorkSpec(s):
        if (v0 := s.key) not in seen0:
            if m0(v0) is None:
                raise Doubt
            if len(seen0) >= LIMIT:
                seen0.clear()
            seen0.add(v0)
        s.depends_on = c4(s.depends_on)
        return s
    return finish_WorkSpec


def _f9e136f9b857d34d(CHUNK_DOUBTS, Doubt, HOT, LIMIT, UNSET, ch1_20, compress, count, decode, finishers, get0, get1, get2, get3, get_remembered, is0, is1, is2, many0, many2, many3, mh1_13_6_1, not_, read_lines, seenh1_13_6_1, utc_times):
    def read_chunks(chunks, on_doubt, unterminated, too_deep, remembered):
        first = 1
        for chunk in chunks:
            if not chunk:
                continue
            try:
                if chunk[-1][-1:] != b'\n':
                    raise Doubt
                structs = list(map(decode, chunk))
                kinds = list(map(type, structs))
                if HOT.issuperset(kinds):
                    hot = structs
                else:
                    mask = list(map(HOT.__contains__, kinds))
                    hot, kinds = list(compress(structs, mask)), list(compress(kinds, mask))
                    for s in compress(structs, map(not_, mask)):
                        finishers[type(s)](s)
                many0(list(map(get0, hot)))
                times1 = utc_times(list(map(get1, hot)))
                many2(list(map(get2, hot)))
                many3(list(map(get3, hot)))
                for s in compress(hot, map(is1, kinds)):
                    if (vh1_13 := s.evidence) is not None:
                        if (vh1_13_6 := vh1_13.partial) is not None:
                            if (vh1_13_6_1 := vh1_13_6.sha256) not in seenh1_13_6_1:
                                if mh1_13_6_1(vh1_13_6_1) is None:
                                    raise Doubt
                                if len(seenh1_13_6_1) >= LIMIT:
                                    seenh1_13_6_1.clear()
                                seenh1_13_6_1.add(vh1_13_6_1)
                    if (vh1_20 := s.resets_at) is not None:
                        s.resets_at = ch1_20(vh1_20)
                remembered.update(map(get_remembered, compress(hot, map(is0, kinds))))
            except CHUNK_DOUBTS:
                if (yield from read_lines(chunk, on_doubt, unterminated, too_deep, remembered, first)):
                    return
                first += len(chunk)
                continue
            if hot is structs:
                for line, s, t1 in zip(count(first), structs, times1):
                    s.at = t1
                    yield line, s
            else:
                for s, t1 in zip(hot, times1):
                    s.at = t1
                yield from zip(count(first), structs)
            first += len(chunk)
    return read_chunks


def _2ddfb41e2dc85696(DOUBTS, Doubt, LIMIT, T0, T1, T2, UNSET, UTC, ch1_20, datetime, decode, doubt, finishers, from_iso, mh0_1, mh0_7, mh0_9, mh1_1, mh1_13_6_1, mh1_7, mh1_9, mh2_1, mh2_7, mh2_9, seenh0_1, seenh0_7, seenh0_9, seenh1_1, seenh1_13_6_1, seenh1_7, seenh1_9, seenh2_1, seenh2_7, seenh2_9, to_datetime):
    def read_lines(lines, on_doubt, unterminated, too_deep, remembered, first=1):
        for line, raw in enumerate(lines, first):
            if raw[-1:] != b'\n':
                unterminated(line)
                return True
            try:
                s = decode(raw)
                t = type(s)
                if t is T0:
                    if (vh0_1 := s.goal_id) not in seenh0_1:
                        if mh0_1(vh0_1) is None:
                            raise Doubt
                        if len(seenh0_1) >= LIMIT:
                            seenh0_1.clear()
                        seenh0_1.add(vh0_1)
                    if ((kh0_3 := len(vh0_3 := s.at)) == 20 and vh0_3[4:20:3] == '--T::Z') or (kh0_3 == 27 and vh0_3[4:20:3] == '--T::.' and vh0_3[26] == 'Z'):
                        try:
                            s.at = from_iso(vh0_3)
                        except ValueError:
                            raise Doubt from None
                    else:
                        s.at = (th0_3 if kh0_3 <= 27 and (th0_3 := to_datetime(vh0_3, datetime)).tzinfo is UTC else doubt())
                    if (vh0_7 := s.work_id) not in seenh0_7:
                        if mh0_7(vh0_7) is None:
                            raise Doubt
                        if len(seenh0_7) >= LIMIT:
                            seenh0_7.clear()
                        seenh0_7.add(vh0_7)
                    if (vh0_9 := s.run_id) not in seenh0_9:
                        if mh0_9(vh0_9) is None:
                            raise Doubt
                        if len(seenh0_9) >= LIMIT:
                            seenh0_9.clear()
                        seenh0_9.add(vh0_9)
                    remembered[s.work_id] = s.attempt
                elif t is T1:
                    if (vh1_1 := s.goal_id) not in seenh1_1:
                        if mh1_1(vh1_1) is None:
                            raise Doubt
                        if len(seenh1_1) >= LIMIT:
                            seenh1_1.clear()
                        seenh1_1.add(vh1_1)
                    if ((kh1_3 := len(vh1_3 := s.at)) == 20 and vh1_3[4:20:3] == '--T::Z') or (kh1_3 == 27 and vh1_3[4:20:3] == '--T::.' and vh1_3[26] == 'Z'):
                        try:
                            s.at = from_iso(vh1_3)
                        except ValueError:
                            raise Doubt from None
                    else:
                        s.at = (th1_3 if kh1_3 <= 27 and (th1_3 := to_datetime(vh1_3, datetime)).tzinfo is UTC else doubt())
                    if (vh1_7 := s.work_id) not in seenh1_7:
                        if mh1_7(vh1_7) is None:
                            raise Doubt
                        if len(seenh1_7) >= LIMIT:
                            seenh1_7.clear()
                        seenh1_7.add(vh1_7)
                    if (vh1_9 := s.run_id) not in seenh1_9:
                        if mh1_9(vh1_9) is None:
                            raise Doubt
                        if len(seenh1_9) >= LIMIT:
                            seenh1_9.clear()
                        seenh1_9.add(vh1_9)
                    if (vh1_13 := s.evidence) is not None:
                        if (vh1_13_6 := vh1_13.partial) is not None:
                            if (vh1_13_6_1 := vh1_13_6.sha256) not in seenh1_13_6_1:
                                if mh1_13_6_1(vh1_13_6_1) is None:
                                    raise Doubt
                                if len(seenh1_13_6_1) >= LIMIT:
                                    seenh1_13_6_1.clear()
                                seenh1_13_6_1.add(vh1_13_6_1)
                    if (vh1_20 := s.resets_at) is not None:
                        s.resets_at = ch1_20(vh1_20)
                elif t is T2:
                    if (vh2_1 := s.goal_id) not in seenh2_1:
                        if mh2_1(vh2_1) is None:
                            raise Doubt
                        if len(seenh2_1) >= LIMIT:
                            seenh2_1.clear()
                        seenh2_1.add(vh2_1)
                    if ((kh2_3 := len(vh2_3 := s.at)) == 20 and vh2_3[4:20:3] == '--T::Z') or (kh2_3 == 27 and vh2_3[4:20:3] == '--T::.' and vh2_3[26] == 'Z'):
                        try:
                            s.at = from_iso(vh2_3)
                        except ValueError:
                            raise Doubt from None
                    else:
                        s.at = (th2_3 if kh2_3 <= 27 and (th2_3 := to_datetime(vh2_3, datetime)).tzinfo is UTC else doubt())
                    if (vh2_7 := s.work_id) not in seenh2_7:
                        if mh2_7(vh2_7) is None:
                            raise Doubt
                        if len(seenh2_7) >= LIMIT:
                            seenh2_7.clear()
                        seenh2_7.add(vh2_7)
                    if (vh2_9 := s.run_id) not in seenh2_9:
                        if mh2_9(vh2_9) is None:
                            raise Doubt
                        if len(seenh2_9) >= LIMIT:
                            seenh2_9.clear()
                        seenh2_9.add(vh2_9)
                else:
                    s = finishers[t](s)
            except DOUBTS:
                s = on_doubt(raw, line)
            except RecursionError:
                raise too_deep(line) from None
            yield line, s
    return read_lines


FACTORIES = {
    '8382679067fdbdc692276099c33f8f32d1db6058ccaf374255ae5328fb10e218': _8382679067fdbdc6,
    '374ca8da64b64830189b853c5a9dde2b8360a7b71132b9f56bb27861cd7b2372': _374ca8da64b64830,
    '7b10c0f9ffbc7251fda5fd1e7ba77204f3a4dd7ad6ca4cafaf32ace79d95e2c2': _7b10c0f9ffbc7251,
    'e1d849eca369dd1cafa9b89f91b93f128ad6b8305e1e5ededf4059f39ef15a30': _e1d849eca369dd1c,
    'f57147381e0d0d507b9923467fc09a4c42d2c0dce36dc1a35ae11c7702cee744': _f57147381e0d0d50,
    'f4d8860756eb218cfbd426f933190622d75ac7fc994b8481531549bdea66b388': _f4d8860756eb218c,
    'ec7084fd98de1ca59794d0ea48c0fa743ee606928aaebedddc46a6e95028b9a6': _ec7084fd98de1ca5,
    '64cd785d6dbd2aaef613c3adb0627280ee14dc1567c69cc2a76a6b4bf4f7147a': _64cd785d6dbd2aae,
    '9b394fc8f98d3618719f6e9e76675e79f675fdf6aaa293c17a6a1c43a42c4468': _9b394fc8f98d3618,
    '3631116c6e90613cecd207643a3a857749416071d7279589e9da3a3acf84a8a8': _3631116c6e90613c,
    'ddda3ca60f2b4a481a61d06e679a1527335c476ccc2b5fb866a25e9afdeb9b06': _ddda3ca60f2b4a48,
    'f099df1d0275b491947bef04990aad2b21fd3e5df330a5372111cf2a5dca8dd6': _f099df1d0275b491,
    '1d8787a008267695561d532c336e40752eae8f22f0c40f69f23c0c36dcbf369e': _1d8787a008267695,
    'dcfe690cc557f16b2ce0a7eb63e22fdeae9fbc60cd717aa4928cd4b193f6298a': _dcfe690cc557f16b,
    'ca495b156f735d9cd2f9b992f0ca9da8ce5631ab7bafd1ca566b23c32baac176': _ca495b156f735d9c,
    'a07ed2acbc75ed3dc839fe132df10d8512afc559fb4076fede8901c327157f48': _a07ed2acbc75ed3d,
    '3103931b81ba7b483ed29c66336f50776e06f51533d389b2fbe8a5e11499fdd0': _3103931b81ba7b48,
    '644b3e839578707462bffa33ec041d66e9f5f33e0c05e9be92bcb0c6d5829cb7': _644b3e8395787074,
    'e50ff81bae294903475edf6a55835cb5556621510f3f3d6fea915ba662af36b7': _e50ff81bae294903,
    '0a0612615ce4594ea36aebe4f046435548ab01eb108c74b7bf8118e57702af93': _0a0612615ce4594e,
    'ebe0100f273e62cafa3b8a595f7397eccb220046e3b5fb5dda82ee35a8506116': _ebe0100f273e62ca,
    '2cf6985bb8fa39e492212d8fb8021e863a0c00fe89222e58d84e332ec7193e61': _2cf6985bb8fa39e4,
    'c04a01c56837bfdcb7b5ada38afe5b9a4bd58c77a62808c38642703445dc312c': _c04a01c56837bfdc,
    '0a8aa7d205ea4554dd97f15a569a29a54137bde50a68c553dcdde742f65bba98': _0a8aa7d205ea4554,
    'e7628e9e3a6c08035b84635cc8e3c1bdc049df6d7b3a1c6e2e8e2383c48b18be': _e7628e9e3a6c0803,
    '938f0fdb2018542ea0f6b3bc48fbeb9fe7227e7ed3672068b2c937ad4c57889a': _938f0fdb2018542e,
    '286132b04da8c030748c7c82fc3be42443144528d341a6b39e45119d147e75e6': _286132b04da8c030,
    'e29282e3f867a68b3789f700c0e0eb63f55fb9e0581dd0ad4bcd1938befca7db': _e29282e3f867a68b,
    'f728033e97780b5a63e9e493dea0c825bad0d291bd04931fc83160af4af85783': _f728033e97780b5a,
    'c88a0413804c60cbbd3e360ad4bf3bc68720a4ea3324792ec7d0e5e9b0ce9fe3': _c88a0413804c60cb,
    'd42efc154aaef797059ea2e94d33a3305dc92b810da297b8a85beb3ea4827e2e': _d42efc154aaef797,
    '883b7c95ce5478b941439e8295f28b1388ea81955ee598438adc9b1519eb3aaa': _883b7c95ce5478b9,
    'd9916357e1cba61c1b47b48afa4ffcc6b3587a2ab1245c700cf653901ddf47dd': _d9916357e1cba61c,
    '23be881d003283af8efba8f3d700b383d10c17aa9042739633b2e4e33024eae6': _23be881d003283af,
    'd041db542de35d0f905d7a7c24614272200ed1d1ef9fe1625fe31d9811157491': _d041db542de35d0f,
    'f2b941dadc009f681e85a615dcdd7cba31da879991b89065a08ade7e57caf1a3': _f2b941dadc009f68,
    '3fad8f753aefe52ded421e3eb63320424c61b40112a498213fc9ca710e6b09f8': _3fad8f753aefe52d,
    '2a19bf2f0eeee82d83b80869a5add94bfd2ad9ad6691a2fe58d60d1bd1dda32b': _2a19bf2f0eeee82d,
    '15d1a99baea80ff403916f4a51261c8bb49abf17f603b54dd00d4a7fd5c1aa04': _15d1a99baea80ff4,
    'af0ead6eca91859c73cbdd971830ec867f848827fad6b8a1aaa65d4673d66921': _af0ead6eca91859c,
    'e84e7bbaf33a24fc9731532e4cf6ea16cde84e48011685c800012f204fdad5a2': _e84e7bbaf33a24fc,
    '1b16f32be6dd0b6bcfafaafefd62eaec655a545d2661ef059c6b2b58745bbdab': _1b16f32be6dd0b6b,
    '44c278d5d1c103886fa514d6af4cbe3cd82ecf32d7c6093fcee0cab8a51334ed': _44c278d5d1c10388,
    '52b1a52f2de16bba504d676c054110759b0cb66e69761e40156384011a34ed67': _52b1a52f2de16bba,
    '5b0f13d52b20e1fb3854c13d68cb6435b59e9cc1d40d06235f62846fe843c914': _5b0f13d52b20e1fb,
    '3014f02e925a87d97dad3e6b6a5395388b1b9eda6966bc6b861814e53a518f35': _3014f02e925a87d9,
    'de36bdedc5f6d55ad3c3595fd1aeeef45a111512eb48b4dc3b916c7cfbcdee90': _de36bdedc5f6d55a,
    'a41e814f0aa876526e599e1cef64312338f331fe727c124c110f9950ed24e942': _a41e814f0aa87652,
    'b7f09d5f04ed51895790950a8e10d87caa3335a5cc1e2450f8af018c74b2e5c0': _b7f09d5f04ed5189,
    '75a7254a6f4e6cb45b8b66f4e02980aa9718cd802430f420ae86625bf0c3af5e': _75a7254a6f4e6cb4,
    '94edeaba85a6b48f3b1d3de5f607292be4277399c59631383c1736e35ba81d55': _94edeaba85a6b48f,
    '984f25572f9dc038ab13e552a280bbf93225a6ed1dedb8aa7fc23228d34657b4': _984f25572f9dc038,
    '60f37f8e1262f50ad24638a23593f9b44b3ba8fecdef1248fe197e1243a1251b': _60f37f8e1262f50a,
    'afd924fa314d97cea531156cfcf834ca66597c3c977f37953757bd1531cd9f18': _afd924fa314d97ce,
    'a0c369c18c60b1504e48536357bef7f8d286988cd4528fe05609db528903d900': _a0c369c18c60b150,
    'da44284e0bb8aab9a3510de9501fc409048795070709c669386e0e4a25ed687a': _da44284e0bb8aab9,
    '282813865fdfc27307dcba6ded1d61f926ed910866d738bcbe451c207f7cef46': _282813865fdfc273,
    '1350416ca4122dec79f7340f8c5635073139bd458e3aa1e6b7eaae8c1f0c8f61': _1350416ca4122dec,
    'dbd0dcc74555a3fa65aad8c9c7d11765020ec1defc7b71895fe66414e3caa6de': _dbd0dcc74555a3fa,
    '17f8d2ec7cc7ebd01258daedc65858b994f2a19652041c9058c7391e85f61c56': _17f8d2ec7cc7ebd0,
    '4d178c72e62a55baa6631cad04a7abb65cdc89c190cc4355389cfcca11901785': _4d178c72e62a55ba,
    'd524b8744e40168d332d54fae383d8ffdbfb36a8db8fc201b36904213fc9b5a3': _d524b8744e40168d,
    '6490622e1d382a02baced11dbdada70c039358b19e5771ebfed9938614c71ec4': _6490622e1d382a02,
    '96eef114dcb1d7daa06a8d4c80ea5b7b8e791daeb93f03e7c6e447ffa318d5e9': _96eef114dcb1d7da,
    'be65c9b08cb570b75e4c72d87af2a857dbfb8243d700726a790d8e3dcfabf8fc': _be65c9b08cb570b7,
    '798034a31868ec5df1d815df53a7ab8d01fd9023429b3d6e9127896e2b25f122': _798034a31868ec5d,
    '8f826dec81919720c3fecb73acd8ff7636a7c8c73aa2e8b81bd2104db0036570': _8f826dec81919720,
    '7140178f9ef03c42a29f70b83989c0570473a614ae397af0ece8752d628081e9': _7140178f9ef03c42,
    '1169608d6d7784a7a639eaa89e72740a7c6ce10f2f5635c193a942ac3f35bbb8': _1169608d6d7784a7,
    'aee8cc0873acdb1d6f0956a7efb56b3514c067e7cfbd258104367c9180d3e4e3': _aee8cc0873acdb1d,
    '8de87a44187ae6e0794923f3156a62045b485bf47c24f9659114cf0e32203c5e': _8de87a44187ae6e0,
    'b98a865b58551101d07ebc89a4c3449d8699dbe3fcbf38481d4df218221d7ec6': _b98a865b58551101,
    'c4ade5c40ce1defb4db19a4f654e696b8a64fb4235e243ad88abc4c93606d9c2': _c4ade5c40ce1defb,
    '5e03012d0ff5fdb031d04a38572fc79c03481b077aeb5e2236233fc2be217331': _5e03012d0ff5fdb0,
    '788b7b3214a37e3e8bbd1662513311bd97a1eb116d042da6ace3793b50eb4fa1': _788b7b3214a37e3e,
    '0b84425bb3f61b282b2b6d6369a0bce7e3f7c6e64e9184403465d7e365a19b6c': _0b84425bb3f61b28,
    '6aa627ded121332f6a741bd8bf113161242221c64a3de5293a30b5c364596935': _6aa627ded121332f,
    '518d121524e32cee32bf4bc9e7f2a02f8085df5c28979c04099ce4ab0a1f81ca': _518d121524e32cee,
    '9bf3dab127192b9d4aaa36fdf5f62600235b34c5cd9902d872550d6d9360d89e': _9bf3dab127192b9d,
    '37e773a687d880dfacf384527a6be942f88bb30e6ca1d8db0dc0c0b952881f72': _37e773a687d880df,
    'ff71654d0bd850669db978ea1a713a097e98bfad297e6ec71b596b9df20ff4a6': _ff71654d0bd85066,
    '5a3ba111159d21505979099c6c59d2513f106017d17a003beb022fa92be67877': _5a3ba111159d2150,
    '25bb8d33c4ce020b9df7c68434592c3441cb29fc99ebd7229b25d6c4d917618e': _25bb8d33c4ce020b,
    'c4b1ed67adb326c400ea5aa5f6590b99063bbe0097c2d5e9eb9ceb7071447a0f': _c4b1ed67adb326c4,
    '760b084fe76dee580560f025a5b8f78960824573f826f6d26da6f7b5cb7b1c51': _760b084fe76dee58,
    '86ae096298f36532c3f7b478022f807d3d58db86e67eb831a4ffec2e01982321': _86ae096298f36532,
    '40e9eb865fc95e7b546a9d770a4ddf2461941adf6b776d33fea58606ab193f80': _40e9eb865fc95e7b,
    'a08306acc96d258c0545d8969cbbe0e2e24a96d2772dd16740d17aed66b5b65e': _a08306acc96d258c,
    '3b924b1a49cd53da2906f1f823e5db2bf23a9d8da60ce07d0440bb1c829376fc': _3b924b1a49cd53da,
    '78d5dab59aa468d990f9b4ba298a07fac8ab633fc72cb52d7758910a00210ad2': _78d5dab59aa468d9,
    '43c31b27840a790ab93a7251094081f6f663073018fd9a5900e19519da53cff1': _43c31b27840a790a,
    '5bc4686cbc2fbe9bd24860fce8d030621001849d786dce7168aa1b0640037f10': _5bc4686cbc2fbe9b,
    'd0ccfaf2737878440d18e6e768daa3369b1d0f14b6b12481f6528de6aa0af604': _d0ccfaf273787844,
    'd57af011f1520426988251fa1781693471e37bee87476a713d6a431787905e67': _d57af011f1520426,
    '98ed47018b48b656b2476aa56faa05167e1e98d527c300803f444a08d296fdf4': _98ed47018b48b656,
    '17abd95f6e606a836db4d2052d1734146354680ef5126524a6a765cf5739d4ab': _17abd95f6e606a83,
    '98627f61bbd28c58de0938bc7c564e58d27153683103a5785df50d491dfc8dac': _98627f61bbd28c58,
    '0ba013519dc7ecbbb586356e459b6327baddee12ede7f620ce825925bc845a50': _0ba013519dc7ecbb,
    'b8d8eb8d73d5f9cb053fad5bddf52851e38a69c8503937f3f5e0f16492f7f14c': _b8d8eb8d73d5f9cb,
    '1b7edfc8a92b5f57308b3e2b01f2dad62a2d8550cb1d4bb1e85cc2ba800948aa': _1b7edfc8a92b5f57,
    '948ba3be771a92fca3a90469da76d95d65a4dd50133d510b2ae976726b6fe94c': _948ba3be771a92fc,
    '1b5ba4b8bb826e7e4462028de8b8708c50d9590071e044c87567e5fe81d0d15d': _1b5ba4b8bb826e7e,
    '3fc37f3b2934897c0158eb166341e9b47f5c1617b1e0ade50d9258e577ba0ba0': _3fc37f3b2934897c,
    '2d6d1577c79faa36063ba2e0dea34ab5bd6e71a02ac56527b35b49eed7998b61': _2d6d1577c79faa36,
    'bb81f64c2c997da88b42d26e9ad1292bc35a48e04a64c0b743c29497c31f7d2c': _bb81f64c2c997da8,
    '5962794a37cd18cb2429a3a3c1923acd8aa887803a9f7be013310e5131b2ed05': _5962794a37cd18cb,
    '32c4c4a080c4eafd6bb987caabd3db301324f8e1b755ee7676549024761f8fa1': _32c4c4a080c4eafd,
    '37f3ff7dc07e863f42d65521268a7732234c29b436f8892a97020fbf54b00e53': _37f3ff7dc07e863f,
    'f203a11bed8e1175b0eaef35d8db24d304403113d84774fa29f59699698cafa3': _f203a11bed8e1175,
    '1a585964de59ca3172da16e90d384beb4252013767d4e53f61767c3fcabbb4d8': _1a585964de59ca31,
    'a56658d0478711f76bd764142657472407a568c07ae3fac6947204712a84eb4d': _a56658d0478711f7,
    'acd4eded51c2d76a33b6e52828a6cfc9d2c19e0517ecffdf3fe0ae3ba35d81ab': _acd4eded51c2d76a,
    '2a0b0cffc530ba0a730984ca3db8f7f388b88728a9e788c91d09163f1f53216b': _2a0b0cffc530ba0a,
    'b7249eda2070fb695761f89e4e685ab27f43e42e0ff9774bfce55e3f4028391a': _b7249eda2070fb69,
    '890feba12437b31ff22540c57719d1bde79ca6255e9f57cc73998bf49dd1964a': _890feba12437b31f,
    '848ece254940e892fbd38db5ca4daae17bd850a053282a0a138899adae0e9c50': _848ece254940e892,
    '23a6930f6921e3ffcc92cf5e0867c800d04d9ddc559ee7982bf6ad4bad14944e': _23a6930f6921e3ff,
    '58214d988e1d1f33883dd40a8e8048a520db2cbd5cf9bcaffc9195d195e48c9d': _58214d988e1d1f33,
    'abd32cdd2b9afb7160f16a1f592565e0de8a54bb569b325ba7b88a2fa17e8291': _abd32cdd2b9afb71,
    '46c0b4ac8eff67f1f8b69a1dc69b0f7a5a9eb7f796526c434d0f0ce28051f446': _46c0b4ac8eff67f1,
    '7b5757617a3e820b1c726589a7708b789c09547a82afeb4343ae18716cfa0299': _7b5757617a3e820b,
    '66aaee8181687f78f8bee3141e88db7721ad7682985c9b2c9f72397d5957b010': _66aaee8181687f78,
    'ebabdcfb648f6a116dd4aadbc9553709b374715c64d905fb9c891baa1dcf4317': _ebabdcfb648f6a11,
    '077169095a85585c981b98cdd94e83ea61af128ac8335c8642e2fb2fc7796fbc': _077169095a85585c,
    'd3f04308d1165163322ce622711ffc3d62d9bb930d4cab3d79d0863e803f2333': _d3f04308d1165163,
    '268ad524b7dcae8214906031a2460bfe99be27086c696862ce06ded3b5821bb6': _268ad524b7dcae82,
    'f9e136f9b857d34dc09fd151d7ac80e314e8ab939a5e54fc5054ccfa4b85cd44': _f9e136f9b857d34d,
    '2ddfb41e2dc8569687a40d0227110afc15d1d71faaf8e47b7c3ad4075764d773': _2ddfb41e2dc85696,
}

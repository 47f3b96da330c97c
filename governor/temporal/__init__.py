"""Temporal as a driver of goals (SPEC §12.11; docs/deployment.md, decision record 0020).

One Temporal workflow per goal (workflow id = goal id) runs governor's pure core; agent
calls and appends are activities; the event store stays the truth. Importing this
package imports nothing: ``names`` needs no Temporal SDK, the rest needs the ``temporal``
extra (``temporalio``).
"""

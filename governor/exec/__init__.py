"""Running agents as processes: the process runner, the scrubbed environment and harness adapters.

Modules:
    * ``process``         spawn one child with an argument list, a timeout that kills its
                          whole process group, and bounded output capture.
    * ``environment``     the allow-listed child environment and the redaction of secrets.
    * ``harness``         the ``Harness`` protocol, the adapter registry and the shared
                          translation of a ``ProcessResult`` into failure text and evidence.
    * ``command``         any executable: prompt on stdin, reply on stdout.
    * ``scripted``        a real subprocess that plays a scenario file (demos and tests).
    * ``scripted_player`` the player run by the scripted harness (standard library only).

This package deliberately imports nothing at import time, so that
``python -m governor.exec.scripted_player`` starts fast.
"""

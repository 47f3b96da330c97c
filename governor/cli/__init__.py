"""The ``governor`` command: parse, call one library function, render, map to an exit code."""

#!/usr/bin/env python3
"""usage: chatty_reader.py N: writes N bytes to stdout *before* reading stdin, then reports
how much stdin it read on stderr. A runner that writes all of stdin first deadlocks."""

import sys

size = int(sys.argv[1])
chunk = b"y" * 65536
written = 0
while written < size:
    sys.stdout.buffer.write(chunk[: size - written])
    written += min(len(chunk), size - written)
sys.stdout.buffer.flush()
data = sys.stdin.buffer.read()
sys.stderr.write(f"read {len(data)} bytes of stdin\n")

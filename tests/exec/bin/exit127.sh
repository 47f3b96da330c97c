#!/bin/sh
# A shell that exits 127 on its own: indistinguishable from "command not found", so not classed.
echo "sh: 1: some-tool: not found" >&2
exit 127

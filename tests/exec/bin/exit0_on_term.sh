#!/bin/sh
# Exits 0 as soon as it is asked to terminate: a timeout must still be reported.
trap 'echo "got TERM, exiting 0" >&2; exit 0' TERM
echo started
while :; do sleep 0.05; done

#!/bin/sh
# usage: family.sh PIDFILE
# Starts a grandchild in its own process group that ignores SIGTERM, writes
# "<own pid> <grandchild pid>" to PIDFILE, then works (sleeps) until killed.
(trap '' TERM HUP INT; exec sleep 600) &
echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"
trap '' TERM HUP INT
while :; do sleep 1; done

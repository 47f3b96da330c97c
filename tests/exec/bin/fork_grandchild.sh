#!/bin/sh
# usage: fork_grandchild.sh PIDFILE
# Forks a grandchild that ignores SIGTERM and sleeps, writes "<own pid> <grandchild pid>"
# to PIDFILE, then waits: on timeout both must die.
(trap '' TERM; exec sleep 300) &
echo "$$ $!" > "$1"
wait

#!/bin/sh
# usage: background_holder.sh PIDFILE
# Exits at once but leaves a grandchild that holds stdout open: the run must not wait for it.
sleep 300 &
echo "$!" > "$1"
echo "leader done"

#!/bin/sh
# Ignores SIGTERM (and so does every child it starts): only SIGKILL ends it.
trap '' TERM
echo started
while :; do sleep 0.05; done

#!/bin/sh
# Committed without its execute bit: exec fails with EACCES.
echo "never runs"

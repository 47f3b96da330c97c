#!/bin/sh
# A vendor CLI that prints ~11 KB of banner on stderr and puts the reason last.
i=0
while [ "$i" -lt 160 ]; do
  echo "vendor-cli banner line $i: starting up, loading plugins, checking the config" >&2
  i=$((i + 1))
done
echo "HTTP/1.1 503 Service Unavailable" >&2
exit 1

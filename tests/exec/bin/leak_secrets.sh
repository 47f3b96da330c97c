#!/bin/sh
# usage: leak_secrets.sh [EXIT_CODE]
# Prints secrets on stdout and stderr, as a careless agent CLI might.
echo "my key is $MY_API_KEY"
echo "openai key sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"
echo "Authorization: Bearer xyzSECRETtoken123456" >&2
echo "retrying with header Bearer abcdefghijklmnopqrstuvwx" >&2
exit "${1:-1}"

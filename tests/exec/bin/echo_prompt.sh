#!/bin/sh
# A well-behaved command agent: reads the prompt on stdin, answers with a JSON object.
prompt=$(cat)
echo "I read ${#prompt} characters."
echo '{"status": "done", "summary": "echoed"}'

"""One planner or worker run: in-agent retry, reply validation, and the run's proof."""

"""Analysis of recorded histories: replay, explain, what-if, tune and simulate."""

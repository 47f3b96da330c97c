"""The LangGraph planning graph and the runner that drives one goal through it."""

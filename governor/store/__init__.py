"""The event store and the history interchange format (JSON Lines)."""

"""The loopback fake vendor server the real codex and claude CLIs are tested against."""

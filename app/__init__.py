"""cairn: location-keyed memory for LLM game agents and narrative engines."""

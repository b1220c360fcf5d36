"""events.handlers package."""

"""services.context package."""

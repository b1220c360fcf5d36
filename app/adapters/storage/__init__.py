"""adapters.storage package."""

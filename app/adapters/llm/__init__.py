"""adapters.llm package."""

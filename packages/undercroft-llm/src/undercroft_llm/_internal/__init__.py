"""Private to `undercroft-llm`: an import-linter contract forbids other distributions from importing it."""

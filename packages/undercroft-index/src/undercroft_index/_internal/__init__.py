"""Private to `undercroft-index`: an import-linter contract forbids other distributions from importing it."""

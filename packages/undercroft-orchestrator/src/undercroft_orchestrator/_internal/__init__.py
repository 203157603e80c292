"""Private to `undercroft-orchestrator`: an import-linter contract forbids other distributions from importing it."""

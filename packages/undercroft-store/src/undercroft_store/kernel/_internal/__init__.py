"""Private to `undercroft-store`: an import-linter contract forbids other distributions from importing it."""

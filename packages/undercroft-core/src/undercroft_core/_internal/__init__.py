"""Private to `undercroft-core`: an import-linter contract forbids other distributions from importing it."""

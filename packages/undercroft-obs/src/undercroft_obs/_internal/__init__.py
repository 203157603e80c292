"""Private to `undercroft-obs`: an import-linter contract forbids other distributions from importing it."""

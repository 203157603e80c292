"""Private to `undercroft-bench`: an import-linter contract forbids other distributions from importing it."""

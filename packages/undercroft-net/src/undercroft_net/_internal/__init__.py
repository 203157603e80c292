"""Private to `undercroft-net`: an import-linter contract forbids other distributions from importing it."""

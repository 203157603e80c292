"""Private to `undercroft-config`: an import-linter contract forbids other distributions from importing it."""

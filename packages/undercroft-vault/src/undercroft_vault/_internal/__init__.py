"""Private to `undercroft-vault`: an import-linter contract forbids other distributions from importing it."""

"""Private to `undercroft-cli`: an import-linter contract forbids other distributions from importing it."""

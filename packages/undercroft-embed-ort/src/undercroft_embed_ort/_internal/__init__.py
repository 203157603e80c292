"""Private to `undercroft-embed-ort`: an import-linter contract forbids other distributions from importing it."""

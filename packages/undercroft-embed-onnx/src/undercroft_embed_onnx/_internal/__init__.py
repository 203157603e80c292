"""Private to `undercroft-embed-onnx`: an import-linter contract forbids other distributions from importing it."""

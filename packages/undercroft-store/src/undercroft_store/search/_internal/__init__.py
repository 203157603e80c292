"""Private helpers of the search pipeline (not part of any public API)."""

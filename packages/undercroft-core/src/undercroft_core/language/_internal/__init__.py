"""Private helpers of the language layer: tables and algorithms no caller should import."""

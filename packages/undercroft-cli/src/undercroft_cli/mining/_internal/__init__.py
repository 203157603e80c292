"""Private helpers of the miners (not part of the public API)."""

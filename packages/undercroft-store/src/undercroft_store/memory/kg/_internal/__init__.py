"""Private helpers of the memory surfaces."""

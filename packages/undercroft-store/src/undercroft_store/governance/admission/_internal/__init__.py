"""Private helpers of the admission screen."""

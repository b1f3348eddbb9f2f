"""insync's results package."""

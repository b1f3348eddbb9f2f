"""insync's cluster package."""

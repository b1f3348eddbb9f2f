"""insync's bench package."""

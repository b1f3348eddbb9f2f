"""insync's checkers package."""

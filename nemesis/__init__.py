"""insync's nemesis package."""

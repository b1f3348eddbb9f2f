"""insync's workloads package."""

"""insync's harness: the CLI, the runner, generators and histories."""

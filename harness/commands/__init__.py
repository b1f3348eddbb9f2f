"""One module per ``insync`` subcommand; each exposes ``register(subparsers)``."""

"""``python -m harness`` runs the insync CLI."""

from harness.cli import main

raise SystemExit(main())

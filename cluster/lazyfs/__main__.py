"""``python3 -m lazyfs BACKING MOUNTPOINT``: serve the power-loss filesystem (see ``fusefs``)."""

from __future__ import annotations

import argparse

from .fusefs import serve


def main() -> None:
    parser = argparse.ArgumentParser(prog="lazyfs", description=__doc__)
    parser.add_argument("backing", help="the durable directory (what a power cut leaves)")
    parser.add_argument("mountpoint", help="where the broker sees its files")
    args = parser.parse_args()
    serve(args.backing, args.mountpoint)


if __name__ == "__main__":
    main()

"""``insync versions [SPEC ...]``: which Kafka releases are cached, and what a spec names.

Without arguments it lists the releases whose jars are in the cache (with
their size), the users' builds laid out there (``--kafka-dist``: version,
commit id, digest, where each was read from) and, per line, the newest
release Maven Central lists; with
specs (``4.2.x``, ``latest``, ``0.9.0.1``) it prints what each resolves to,
its modes and whether its jars are cached. It reads Maven Central's listing
(cached for a day) and never downloads jars.
"""

from __future__ import annotations

import argparse
from typing import Any

from harness.base.errors import UsageError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "versions", help="cached Kafka releases, and what a version spec resolves to",
        description="List the Kafka releases whose jars are cached, the builds (--kafka-dist) "
        "laid out there, and the newest release "
        "of each line Maven Central lists; with SPECs (4.2.x, latest, 0.9.0.1), what each "
        "resolves to. Downloads no jars.")
    p.add_argument("specs", nargs="*", metavar="SPEC",
                   help="version specs to resolve: an exact release, a line (4.2.x), latest")
    p.set_defaults(handler=_handle)


def _describe(version: Any, cached: dict[str, tuple[int, int]]) -> str:
    modes = "+".join(sorted(version.modes))
    jars = cached.get(version.version)
    where = f"cached, {jars[0]} jars, {jars[1] / 1e6:.1f} MB" if jars else "not cached"
    runs = "" if version.can("create_topics") else ", topics through ZooKeeper"
    return f"Kafka {version.version} (kafka_{version.scala}, {modes}; {where}{runs})"


def _cached(root: Any) -> dict[str, tuple[int, int]]:
    from cluster.distribution import distribution_dir, load_distribution
    from cluster.versions import release

    found: dict[str, tuple[int, int]] = {}
    kafka = root / "kafka"
    for folder in sorted(kafka.iterdir()) if kafka.is_dir() else []:
        try:
            version = release(folder.name)
        except UsageError:  # a folder that names no release insync deploys
            continue
        dist = load_distribution(version, distribution_dir(version, root))
        if dist is not None:
            found[version.version] = (len(dist.jars), sum(p.stat().st_size for p in dist.jar_paths))
    return found


def _handle(args: argparse.Namespace) -> int:
    from cluster.kafka_dist import cached_builds
    from cluster.releases import default_cache_root, listing
    from cluster.versions import FLOOR, parse_number, release, resolve_version

    root = default_cache_root()
    cached = _cached(root)
    if args.specs:
        resolved = [(spec, resolve_version(spec, root)) for spec in args.specs]
        for spec, version in resolved:
            print(f"{spec} -> {_describe(version, cached)}")
        return 0
    print(f"cached under {root / 'kafka'}:")
    for text in sorted(cached, key=lambda v: parse_number(v) or ()):
        print(f"  {_describe(release(text), cached)}")
    if not cached:
        print("  (none)")
    builds = cached_builds(root)
    print(f"builds (--kafka-dist) cached under {root / 'kafka'}:")
    for b in builds:
        commit = f"commit {b.commit_id}, " if b.commit_id else ""
        print(f"  {b.root.name}: Kafka {b.version} ({commit}sha256 {b.sha256[:16]}..., "
              f"{b.jars} jars, {b.size / 1e6:.1f} MB) from {b.path}")
    if not builds:
        print("  (none)")
    listed = listing(root, fresh=True)
    newest: dict[tuple[int, ...], tuple[int, ...]] = {}
    for text in listed.versions:
        number = parse_number(text)
        if number is None or number < FLOOR:
            continue
        line = number[:3] if number[0] == 0 else number[:2]
        newest[line] = max(newest.get(line, number), number)
    print("lines Maven Central lists (SPEC.x -> newest release):")
    for line in sorted(newest):
        name = ".".join(map(str, line))
        print(f"  {name}.x -> {'.'.join(map(str, newest[line]))}")
    latest = max(newest.values())
    print(f"latest -> {'.'.join(map(str, latest))}")
    return 0

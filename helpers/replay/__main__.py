"""Command line: `python -m helpers.replay serve | record | synthesize`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from helpers.replay.server import LoopbackService


def _run(service: LoopbackService, port: int, banner: str) -> int:
    """Start a loopback service, print `banner` (`{url}`: where it listens), serve until Ctrl-C."""
    try:
        service.start()
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}", file=sys.stderr)
        return 2
    print(banner.replace("{url}", service.url), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        service.stop()
    return 0


def _serve(args: argparse.Namespace) -> int:
    """Run the replay server in the foreground."""
    from helpers.paths import RECORDINGS_DIR
    from helpers.replay.server import ReplayServer

    server = ReplayServer(args.cassettes or RECORDINGS_DIR, pace=args.pace, port=args.port)
    banner = (
        f"Replaying {len(server.interactions)} interactions from {len(server.files)} cassettes "
        "at {url}/v1 (engine profiles under {url}/engines/<engine>/v1; a lesson's own cassette "
        "first under {url}/lessons/<lesson>/v1). Ctrl-C stops."
    )
    return _run(server, args.port, banner)


def _record(args: argparse.Namespace) -> int:
    """Run the record proxy in the foreground."""
    from helpers.replay.record import RecordProxy, upstream_host

    proxy = RecordProxy(args.upstream, args.out, port=args.port)
    banner = (
        f"Recording proxy at {{url}}/v1 -> {upstream_host(args.upstream)}; writing {args.out}. "
        "Use it as base_url with your real key. Ctrl-C stops."
    )
    return _run(proxy, args.port, banner)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and --help)."""
    parser = argparse.ArgumentParser(
        prog="python -m helpers.replay",
        description="Replay server, record proxy and cassette synthesis for the notebooks.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="answer OpenAI-style requests from cassettes on 127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    serve.add_argument(
        "--cassettes", type=Path, help="a cassette file or folder (default: data/recordings)"
    )
    serve.add_argument(
        "--pace",
        action="store_true",
        help="space the chunks like a real engine typing (helpers/replay/pacing.py)",
    )
    record = sub.add_parser(
        "record", help="proxy a live endpoint on 127.0.0.1 and write a cassette"
    )
    record.add_argument(
        "--upstream", required=True, help="live base URL, e.g. https://api.moonshot.ai/v1"
    )
    record.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    record.add_argument("--out", type=Path, required=True, help="cassette file to write")
    sub.add_parser(
        "synthesize",
        help="rebuild the shipped cassettes from the scenarios (options: see synthesize --help)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a subcommand; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "synthesize":  # the synthesis script parses its own options
        from helpers.replay.synthesize import main as synthesize_main

        return synthesize_main(argv[1:])
    args = build_parser().parse_args(argv)
    return _serve(args) if args.command == "serve" else _record(args)


if __name__ == "__main__":
    sys.exit(main())

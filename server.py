"""The local playground server: serves the built page (web/dist) and trains tokenizers.

`python server.py [--host 127.0.0.1] [--port 5000] [--data-dir DIR]` (or `make run`).

This file is only the command line: the application is the package `playground/` (its
docstring maps the modules and the HTTP API); `from server import create_app` still works.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
import signal
import socket
import sys

from playground import create_app
from playground.config import DEFAULTS
from playground.jobs_api import JOBS
from playground.serving import playground_server
from tokenizer.validate import REAL

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ANY_ADDRESS = ("0.0.0.0", "::")

__all__ = ["create_app", "main"]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    allowed = list(args.allow_host)
    if args.host not in (*LOOPBACK, *ANY_ADDRESS):
        allowed.append(f"[{args.host}]" if ":" in args.host else args.host)
    try:
        socket.getaddrinfo(args.host, args.port)  # werkzeug prints a bare reason and exits 1
    except (OSError, UnicodeError) as e:
        print(
            f"error: cannot listen on {args.host}: {getattr(e, 'strerror', None) or e}; give an "
            "address of this machine (127.0.0.1, the default; 0.0.0.0 for every interface)",
            file=sys.stderr,
        )
        return 2
    try:
        app = create_app(
            {
                "DATA_DIR": args.data_dir,
                "WEB_DIR": args.web_dir,
                "ALLOWED_HOSTS": allowed,
                "JOB_TIME_LIMIT": args.job_time_limit,
            }
        )
    except OSError as e:  # the data folder cannot be made (a file is in the way, a read-only disk)
        print(f"error: --data-dir {args.data_dir}: {e.strerror or e}; give a folder", file=sys.stderr)
        return 2
    try:
        server = playground_server(args.host, args.port, app)
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e.strerror}", file=sys.stderr)
        return 2
    shown_host = "127.0.0.1" if args.host in ANY_ADDRESS else args.host
    if ":" in shown_host:
        shown_host = f"[{shown_host}]"
    print(f"BPE Playground: http://{shown_host}:{server.server_port}/", flush=True)
    print(f"  trained tokenizers in {app.config['DATA_DIR']}; Ctrl-C to stop", flush=True)
    if args.host not in LOOPBACK:
        print(
            "  warning: listening beyond this machine; anyone who can reach it can train and delete",
            flush=True,
        )
    if not (app.config["WEB_DIR"] / "index.html").is_file():
        print(f"  note: {app.config['WEB_DIR']} is not built yet: run `make build`", flush=True)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # unwinds serve_forever into the cleanup below

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()  # werkzeug's returns quietly on KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print("stopping: cancelling unfinished jobs", flush=True)
        app.extensions[JOBS].shutdown()
    return 0


# What the two numbers are written with: ASCII digits (and, for seconds, a point and an
# exponent: validate.REAL). int() and float() also read '٥٠٠٠' (Arabic-Indic), '５０００' (fullwidth) and
# '5_000': `--port ٥٠٠٠` listened on 5000 without a word.
PORT_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def _port(value: str) -> int:
    """0..65535: socket.bind() takes 99999 as 99999 % 65536 (34463) without a word."""
    port = int(value) if PORT_DIGITS.fullmatch(value.strip()) and len(value.strip()) <= 5 else -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port: give 0 to 65535 (0 picks a free one)")
    return port


def _seconds(value: str) -> float:
    seconds = float(value) if REAL.fullmatch(value.strip()) else math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    return seconds


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="BPE Playground: the page + a local training server")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=_port, default=5000, help="port (default 5000; 0 picks a free one)")
    parser.add_argument("--data-dir", default=str(DEFAULTS["DATA_DIR"]), help="where trained tokenizers live")
    parser.add_argument(
        "--web-dir", default=str(DEFAULTS["WEB_DIR"]), help="the built page (default web/dist)"
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also accept this Host header (e.g. a LAN name when binding 0.0.0.0)",
    )
    parser.add_argument(
        "--job-time-limit",
        type=_seconds,
        default=DEFAULTS["JOB_TIME_LIMIT"],
        metavar="SECONDS",
        help=f"stop a training job after this long (default {DEFAULTS['JOB_TIME_LIMIT']:g})",
    )
    return parser


if __name__ == "__main__":
    sys.exit(main())

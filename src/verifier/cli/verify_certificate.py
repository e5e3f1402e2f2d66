"""CLI command ``verify-certificate``: check exact LP certificates (``check --certificates``, ``certificates/``)
with the independent checker ``mechverify.certcheck`` -- plain ``Fraction`` arithmetic, no solver."""
from __future__ import annotations

import argparse
import os

from .common import EXIT_FINDING, EXIT_USAGE, CliError, command


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE",
                   help="certificate files (JSON), or directories searched for *.json")
    p.add_argument("--quiet", action="store_true", help="print only rejections and the summary")


@command("verify-certificate", "check exact LP certificates (primal, dual, Farkas ray) against their instances "
                               "without a solver; exit 0 all accepted, 1 one rejected, 2 malformed")(_configure)
def cmd_verify_certificate(args: argparse.Namespace) -> int:
    """``verify-certificate``: :func:`verify_lp_certificates`."""
    for p in args.paths:
        if not os.path.exists(p):
            raise CliError(f"{p}: no such file or directory")
    return verify_lp_certificates(args.paths, args.quiet)


def verify_lp_certificates(paths, quiet: bool = False) -> int:
    """Every file of ``paths`` read first (a malformed one: one line, exit 2, nothing checked), then checked;
    a rejection names the failing row or column (exit 1).  ``replay`` calls it for LP certificate files."""
    import sys

    from ..dual_certificates import certificate_files, verify_files

    files = certificate_files(paths)
    if not files:
        raise CliError(f"paths: no certificate files (*.json) in {', '.join(paths)}")
    error, checked = verify_files(files)
    if error is not None:
        print(f"error: malformed certificate {error}", file=sys.stderr)
        return EXIT_USAGE
    bad = 0
    for c in checked:
        if not c.ok:
            bad += 1
            print(f"REJECTED {c.path}: {c.where}: {c.text}")
        elif not quiet:
            print(f"ok       {c.path}: {c.text}")
    print(f"{len(checked) - bad} accepted, {bad} rejected")
    return EXIT_FINDING if bad else 0

"""CLI command ``verify-certificate``: ``replay`` restricted to exact LP certificates (``check --certificates``,
``certificates/``; directories searched for ``*.json``), checked by the independent checker
``mechverify.lp_certificate_checker`` -- plain ``Fraction`` arithmetic, no solver (``verifier.artifacts``)."""
from __future__ import annotations

import argparse

from .common import command, replay_artifacts


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE",
                   help="certificate files (JSON), or directories searched for *.json")
    p.add_argument("--quiet", action="store_true", help="print only rejections and the summary")


@command("verify-certificate", "check exact LP certificates (primal, dual, Farkas ray) against their instances "
                               "without a solver; exit 0 all accepted, 1 one rejected, 2 malformed")(_configure)
def cmd_verify_certificate(args: argparse.Namespace) -> int:
    """``verify-certificate``: every file of the paths read first (a malformed one: one line, exit 2, nothing
    checked), then checked; a rejection names the failing row or column (exit 1)."""
    from ..artifacts import LP_CERTIFICATE

    return replay_artifacts(args.paths, args.quiet, kind=LP_CERTIFICATE)

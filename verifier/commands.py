"""CLI commands ``check`` and ``replay`` (registered into ``verifier.cli``)."""
from __future__ import annotations

import argparse
import json
import math
from fractions import Fraction
from typing import Any

from mechverify.numbers import fmt, fmt_exact

from .cli import CliError, command


def _num(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, float):
        return "inf" if math.isinf(v) else v
    if isinstance(v, Fraction):
        return fmt_exact(v)
    return v


VERDICT_TEXT = {
    "violated": "VIOLATED",
    "satisfied": "satisfied on this instance (exact check)",
    "not_refuted": "no violation found",
    "not_applicable": "not applicable",
    "unknown": "unknown",
}


def result_to_json(r) -> dict[str, Any]:
    out = {"property": r.property, "variant": r.variant, "verdict": r.verdict, "measure": _num(r.measure),
           "claimed": r.claimed, "claim_source": r.claim_source,
           "claims": r.claims, "trials": r.trials,
           "seconds": round(r.seconds, 3), "note": r.note or None, "counterexample": r.path, "witness": None}
    if r.certificate is not None:
        c = r.certificate
        w = c.witness
        out["witness"] = {
            "summary": c.summary, "gap": fmt_exact(c.gap), "method": c.method, "robust": c.robust,
            "users": [w.env.users[j] for j in w.users],
            "deviation": w.deviation.to_dict(w.env) if w.deviation is not None else None,
            "utilities": {k: (_num(v) if not isinstance(v, tuple) else [_num(a) for a in v])
                          for k, v in c.utilities.items()},
        }
    return out


def result_line(r) -> str:
    head = f"{r.property}/{r.variant}"
    text = VERDICT_TEXT[r.verdict]
    if r.verdict == "violated":
        text += f": {r.certificate.summary}"
        if r.path:
            text += f" [{r.path}]"
        if r.certificate.robust is False:
            text += " (not for every allocation the definition allows)"
    elif r.verdict == "not_refuted":
        text += f" in {r.trials} deviations / {r.seconds:.1f} s"
        if r.measure is not None:
            text += f" (worst measure {fmt(r.measure)})"
    elif r.verdict == "satisfied" and r.measure is not None:
        text += f" (measure {fmt(r.measure)})"
    if r.note and r.verdict in ("not_applicable", "unknown", "not_refuted"):
        text += f" -- {r.note}"
    from .check import refuted_claims

    claims = r.claims
    claim = "; ".join(f"claimed {c['status']} [{c['source']}]" + (f" (not about this instance: {c['outside']})"
                                                                    if c["outside"] else "")
                      for c in claims) if claims else "no claim"
    wrong = refuted_claims(r)
    refuted = ""
    if wrong:
        refuted = "  << CLAIM REFUTED" + (f" ({'; '.join(c['source'] for c in wrong)})" if len(claims) > 1 else "")
    return f"{head:28s} {text}   ({claim}){refuted}"


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism name (see 'list')")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--properties", default=None,
                   help="comma-separated: sp,gsp,ef,si,po,bf,srf,pm,single-server-drf (default: all)")
    p.add_argument("--budget", type=float, default=10.0,
                   help="seconds for the deviation searches (SP, GSP, PM) in total (default: 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed for deviation search (default: 0)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="store certified violations as counterexample files under DIR (e.g. counterexamples)")


@command("check", "every property's verdict for a mechanism on one instance")(_configure_check)
def cmd_check(args: argparse.Namespace) -> int:
    from mechanisms import get
    from mechverify.model import load_environment

    from .check import check_instance
    from .properties import get_property
    from .store import persist

    mech = get(args.mechanism)
    props = [s.strip() for s in args.properties.split(",") if s.strip()] if args.properties else None
    if props:
        for pname in props:
            get_property(pname)
    if args.budget <= 0:
        raise CliError(f"--budget: must be > 0 seconds (got {args.budget})")
    env = load_environment(args.instance)
    results = check_instance(mech, env, props, budget=args.budget, seed=args.seed)
    if args.store:
        from .claims import claims_for

        for r in results:
            if r.certificate is not None:
                done = persist(r.certificate, mech, provenance={"kind": "check", "instance": args.instance,
                                                                "seed": args.seed},
                               root=args.store, claims=claims_for(mech, r.property, r.variant))
                r.certificate, r.path = done.certificate, done.path
    if args.format == "json":
        print(json.dumps({"mechanism": mech.name, "instance": args.instance, "seed": args.seed,
                          "budget": args.budget, "results": [result_to_json(r) for r in results]}, indent=1))
    else:
        print(f"{mech.name} on {args.instance} ({env.describe()})")
        for r in results:
            print("  " + result_line(r))
    return 0


def _configure_replay(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", default=["counterexamples"],
                   help="counterexample files or directories (default: counterexamples)")
    p.add_argument("--quiet", action="store_true", help="print only failures and the summary")


@command("replay", "re-verify stored counterexamples exactly; non-zero exit if any no longer holds")(_configure_replay)
def cmd_replay(args: argparse.Namespace) -> int:
    import os

    from .store import find_files, replay

    for p in args.paths:
        if not os.path.exists(p):
            raise CliError(f"{p}: no such file or directory")
    files = find_files(args.paths)
    bad = 0
    for f in files:
        r = replay(f)
        if not r.ok:
            bad += 1
            print(f"FAIL {f}: {r.message}")
        elif not args.quiet:
            print(f"ok   {f}: {r.message}")
    print(f"{len(files) - bad} passed, {bad} failed")
    return 1 if bad else 0

"""Write the stored exact LP certificates of ``certificates/`` (docs/certificates.md); rerunnable:

    python tools/make_certificates.py [DIR]        (default: certificates)

Pareto optimality (the domination LP, PO's fractional reading: ``Property.lp_certificate``, as
``check --certificates`` writes it) of the allocations of drf, drfh and tsf on the seed papers' worked
examples, a dominated allocation (per-server DRF on seed 001's Fig. 1, and PS-DSF's RDM allocation the
paper says is not PO), the maximal common level of drf, drfh and tsf (``mechverify.lp_certificates
.level_certificate``, the normaliser named by the mechanism's facet ``Mechanism.z3.normaliser``) and one
infeasibility proof by a Farkas ray built from a level's dual.  ``tests/test_certificates_stored.py``
replays every file with the independent checker and rejects perturbed copies.
"""
from __future__ import annotations

import os
import sys
from fractions import Fraction

from mechanisms import get
from mechverify.instances import load_environment
from mechverify.lp_certificates import level_certificate, unreachable_from_level
from verifier.files import atomic_write_json
from verifier.properties import get_property

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (mechanism, example) whose PO verdict is stored
PARETO = [
    ("drf", "003-ex1"), ("drf", "003-ex2"), ("drf", "004-app91-truthful"),
    ("drfh", "000-fig1"), ("drfh", "001-fig1"), ("drfh", "001-drfh-not-si"),
    ("tsf", "000-fig1"), ("tsf", "000-fig2"), ("tsf", "002-fig1-weighted"), ("psdsf-tdm", "002-fig4-channels"),
    ("psdsf-tdm", "002-fig1-weighted"),
    ("per-server-drf", "001-fig1"), ("psdsf-rdm", "002-psdsf-rdm-not-po"),
]
#: (mechanism, example) whose maximal common level is stored
LEVELS = [("drf", "003-ex1"), ("drfh", "001-fig1"), ("tsf", "000-fig1"), ("tsf", "002-fig1-weighted")]
#: (mechanism, example, factor): no allocation gives every user the tasks of factor x the level
UNREACHABLE = [("tsf", "000-fig1", Fraction(101, 100))]


def _about(mech, example: str) -> dict:
    return {"mechanism": mech.name, "instance_file": f"examples/{example}.json"}


def main(argv: list[str]) -> int:
    out = argv[0] if argv else os.path.join(ROOT, "certificates")
    po = get_property("po")
    written = []
    levels = {}
    for name, example in PARETO + [(m, e) for m, e in LEVELS if (m, e) not in PARETO]:
        mech = get(name)
        env = load_environment(os.path.join(ROOT, "examples", f"{example}.json"))
        alloc = mech(env, exact=True)
        if (name, example) in PARETO:
            cert, why = po.lp_certificate(mech, env, "fractional", alloc)
            if cert is None:
                print(f"{name} on {example}: no certificate ({why})", file=sys.stderr)
                return 1
            cert["claim"]["instance_file"] = f"examples/{example}.json"
            written.append((f"{name}-{example}-po.json", cert))
        if (name, example) in LEVELS:
            cert, why = level_certificate(env, alloc, mech.setting.feasibility, mech.z3.normaliser,
                                          _about(mech, example))
            if cert is None:
                print(f"{name} on {example}: no level certificate ({why})", file=sys.stderr)
                return 1
            levels[(name, example)] = cert
            written.append((f"{name}-{example}-level.json", cert))
    for name, example, factor in UNREACHABLE:
        cert, why = unreachable_from_level(levels[(name, example)], factor)
        if cert is None:
            print(f"{name} on {example}: no Farkas certificate ({why})", file=sys.stderr)
            return 1
        written.append((f"{name}-{example}-unreachable.json", cert))
    for fname, cert in written:
        atomic_write_json(os.path.join(out, fname), cert)
        print(f"{fname}: {cert['claim']['kind']}: {cert['claim']['statement']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A mechanism's symbolic encoding, declared where it is registered (``register(..., z3=Z3Spec(...))``): which
of the z3 engine's encoders reproduces it and with which normaliser (docs/z3.md, "Specs").  Plain data: the
encoders and normalisers themselves live in ``verifier/engines/z3/specs.py``, which reads this facet off the
``Mechanism`` and never looks a mechanism up by its name."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Z3Spec", "ENCODERS", "NORMALISERS"]

#: the z3 engine's encoders (``verifier/engines/z3/encoders.py``; docs/z3.md, "Encoders")
ENCODERS = ("drf-closed-form", "leximin", "algorithm1", "lp-argmax", "kkt")
#: the symbolic normalisers ``N_j`` (``verifier/engines/z3/specs.py``; ``mechanisms/paper/normalisers.py``)
NORMALISERS = ("dominant-share", "pooled-dominant-share", "pooled-dominant-share+external", "monopoly-sum", "eta")


@dataclass(frozen=True)
class Z3Spec:
    """How the z3 engine encodes a mechanism, or (``encoder=""``) why it does not (``not_encoded``).

    ``encoder``: one of :data:`ENCODERS`; ``normaliser``: one of :data:`NORMALISERS` (the common-level and
    leximin encoders; ``""`` for the others); ``placement``: the polytope honours eligibility;
    ``normalisation``: of the certification domain's demand vectors (Lemma L1: ``"first"`` entry = 1, or
    the ``"dominant"`` share = 1); ``requires_unbounded``: the encoding covers unbounded task counts only;
    ``description``: one line for the certificate."""

    encoder: str = ""
    normaliser: str = ""
    placement: bool = True
    normalisation: str = "first"
    requires_unbounded: bool = False
    description: str = ""
    not_encoded: str = ""

    def __post_init__(self) -> None:
        if self.encoder and self.encoder not in ENCODERS:
            raise ValueError(f"Z3Spec.encoder: one of {', '.join(ENCODERS)} (got {self.encoder!r})")
        if self.normaliser and self.normaliser not in NORMALISERS:
            raise ValueError(f"Z3Spec.normaliser: one of {', '.join(NORMALISERS)} (got {self.normaliser!r})")
        if self.normalisation not in ("first", "dominant"):
            raise ValueError(f"Z3Spec.normalisation: 'first' or 'dominant' (got {self.normalisation!r})")
        if not self.encoder and not self.not_encoded:
            raise ValueError("Z3Spec: an encoder, or not_encoded saying why there is none")

    @classmethod
    def none(cls, why: str) -> "Z3Spec":
        """No symbolic encoding, and why (the z3 engine answers 'unknown' with it)."""
        return cls(not_encoded=why)

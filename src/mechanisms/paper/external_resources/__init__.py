"""Seed 004 (Meskar & Liang): TSF-ER and its rivals, one module per mechanism (docs/seed004-mechanisms.md).

``tsf_er`` (Algorithm 1 as printed, and the leximin of Thm 5), ``drf_er``, ``alpha`` (DRF-/TSF-alpha
with a fixed external split), ``cru``, ``mnw`` and ``online`` (Algorithm 2, whole tasks).  Importing
the package registers them all.
"""
from .setting import SEED004_SETTING  # noqa: F401
from .tsf_er import TSF_ER_CLAIMS, algorithm1, eta, etas, etas_float, tsf_er, tsf_er_maxmin  # noqa: F401
from .drf_er import drf_er  # noqa: F401
from .alpha import alpha_by_resource, alpha_equal, make_alpha_mechanism, resolve_alpha  # noqa: F401
from .cru import MAX_CRU_BRANCH, cru, rho  # noqa: F401
from .mnw import mnw  # noqa: F401
from .online import Scheduler, tsf_er_online  # noqa: F401

__all__ = ["SEED004_SETTING", "TSF_ER_CLAIMS", "algorithm1", "eta", "etas", "etas_float", "tsf_er", "tsf_er_maxmin",
           "drf_er", "alpha_by_resource", "alpha_equal", "make_alpha_mechanism", "resolve_alpha", "MAX_CRU_BRANCH",
           "cru", "rho", "mnw", "Scheduler", "tsf_er_online"]

"""``run``: every applicable property of one mechanism, searched within a time budget.

Per (property, variant) cell: the Hypothesis search (+ misreport optimiser for SP/GSP) looks for a
violation inside the mechanism's setting; a violation (always an exact certificate) is minimised
(``verifier.minimize``) and stored (``verifier.store``); the verdict says exactly what was established:

* ``violated``     -- exact counterexample, stored at ``counterexample``;
* ``certified``    -- a certifier (the z3 layer, ``--certify``) proved the property on a stated domain;
* ``not_refuted``  -- no violation in ``trials`` candidates / ``seconds``; ``measure`` is the worst seen;
* ``unknown``      -- nothing could be established (``note`` says why).

Budget: cells run one after another; each gets the time left divided by the weights of the cells left
(deviation properties weigh 2), so time a cell does not use goes to the next ones.  Shrinking and
minimising a found violation take a little extra (capped).  Deterministic for a given seed up to how far
the time budget lets each search go; ``max_trials`` makes a run fully reproducible.

Claims: a claim registered without a variant covers every variant of its property except EF ``literal``
(the stricter reading that counts bundles on servers the envious user cannot use; papers with placement
constraints mean the placement-aware one).  A claim ``holds`` with a ``violated`` verdict is REFUTED.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from mechverify.model import describe_shape
from mechverify.numbers import fmt, fmt_exact

from .engines import strategies as strat
from .engines.search import SearchResult, clock, search
from .minimize import describe_size
from .properties import PROPERTIES, get_property
from .properties.base import Certificate
from . import claims as claims_mod
from .store import DEFAULT_DIR, persist

__all__ = ["CellResult", "RunReport", "run_mechanism", "run_cell", "plan", "claim_for", "claims_for", "CERTIFIERS",
           "register_certifier", "DEFAULT_BUDGET", "verdict_text"]

DEFAULT_BUDGET = 60.0
DEFAULT_PROPERTIES = ["sp", "gsp", "ef", "si", "po", "bf", "srf", "pm", "single-server-drf"]
DEVIATION_WEIGHT = 2.0
MIN_SHARE = 1.0  # CPU seconds every cell gets even when earlier cells overran

# Certifiers (the z3 layer plugs in here): fn(mech, prop, variant, budget_seconds) -> None or
# {"domain": {...}, "note": "..."} when the property is PROVED on that domain.
CERTIFIERS: list[Callable[..., Optional[dict]]] = []


def register_certifier(fn: Callable[..., Optional[dict]]) -> Callable[..., Optional[dict]]:
    CERTIFIERS.append(fn)
    return fn


@dataclass
class CellResult:
    property: str
    variant: str
    claims: list  # [(status, source)] -- papers can disagree (PS-DSF: seed 000 vs 002)
    verdict: str  # 'violated' | 'certified' | 'not_refuted' | 'unknown'
    counterexample: Optional[str] = None
    measure: Any = None
    trials: int = 0
    seconds: float = 0.0
    time_to_first: Optional[float] = None
    size: Optional[dict] = None
    minimality: Optional[dict] = None
    engine: str = ""
    note: str = ""
    domain: dict = field(default_factory=dict)
    certificate: Optional[Certificate] = None
    certified: Optional[dict] = None
    stored_new: bool = False
    wall_seconds: float = 0.0
    wall_to_first: Optional[float] = None
    outcomes: list = field(default_factory=list)  # per claim: REFUTED / confirmed / not refuted / ...

    @property
    def claimed(self) -> Optional[str]:
        """The first registered claim's status ('holds' | 'fails'), None without a claim."""
        return self.claims[0][0] if self.claims else None

    @property
    def claim_source(self) -> Optional[str]:
        return self.claims[0][1] if self.claims else None

    @property
    def refuted(self) -> bool:
        """Some paper says it holds, and an exact counterexample INSIDE that claim's domain shows it does not."""
        if self.outcomes:
            return any(o == "REFUTED" for o in self.outcomes)
        return self.verdict == "violated" and any(st == "holds" for st, _ in self.claims)

    def claim_status(self) -> str:
        """How the verdict relates to the papers' claims."""
        if not self.claims:
            return "no claim"
        if self.outcomes:
            if len(self.claims) == 1:
                return self.outcomes[0]
            return "; ".join(f"{src.split()[0]} '{st}': {o}" for (st, src), o in zip(self.claims, self.outcomes))
        texts = []
        for status in ("holds", "fails"):
            if not any(st == status for st, _ in self.claims):
                continue
            if status == "holds":
                t = {"violated": "REFUTED", "certified": "confirmed on the certified domain",
                     "not_refuted": "not refuted", "unknown": "undecided"}[self.verdict]
            else:
                t = {"violated": "confirmed", "certified": "CONTRADICTED (certified)",
                     "not_refuted": "not reproduced", "unknown": "undecided"}[self.verdict]
            texts.append(t if len({st for st, _ in self.claims}) == 1 else f"'{status}' claim {t}")
        return "; ".join(texts)

    def refuted_sources(self) -> list[str]:
        return [src for (st, src), o in zip(self.claims, self.outcomes) if o == "REFUTED"]

    def claims_text(self) -> str:
        return "; ".join(f"{st} [{src}]" for st, src in self.claims) if self.claims else "no claim"


@dataclass
class RunReport:
    mechanism: str
    title: str
    setting: str
    seed: int
    budget: float
    domain: dict
    results: list[CellResult]
    skipped: list[tuple[str, str, str]]  # (property, variant, reason)
    seconds: float = 0.0  # CPU seconds (the budget's clock)
    wall_seconds: float = 0.0


def claims_for(mech, prop: str, variant: str) -> list:
    """Every registered claim covering ``prop``/``variant`` (``verifier.claims``)."""
    return claims_mod.claims_for(mech, prop, variant)


def claim_for(mech, prop: str, variant: str):
    """The first claim covering ``prop``/``variant``, or None."""
    found = claims_for(mech, prop, variant)
    return found[0] if found else None


def plan(mech, properties: Optional[Sequence[str]] = None) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """Cells to search and the ones skipped (with the reason)."""
    cells, skipped = [], []
    for name in properties or DEFAULT_PROPERTIES:
        prop = get_property(name)
        for v in prop.variants:
            why = strat.variant_possible(mech.setting, prop.name, v)
            if why:
                skipped.append((prop.name, v, why))
            else:
                cells.append((prop.name, v))
    return cells, skipped


def verdict_text(r: CellResult) -> str:
    """What the verdict means, in words (never a bare 'holds')."""
    if r.verdict == "violated":
        where = r.counterexample or "not stored"
        return f"violated (counterexample {where})"
    if r.verdict == "certified":
        dom = (r.certified or {}).get("domain")
        if isinstance(dom, dict) and isinstance(dom.get("shape"), dict):
            sh = dom["shape"]
            text = (describe_shape(sh["users"], sh["servers"], sh["resources"], sh.get("external", 0))
                    + "; positive data, equal weights, no placement, unbounded tasks (docs/z3.md)")
            how = (r.certified or {}).get("method")
            return f"certified for domain D (z3{', ' + how if how else ''}): {text}"
        return f"certified for domain D: {dom}" if dom else "certified"
    if r.verdict == "not_refuted":
        mv = r.measure
        if mv is not None and not isinstance(mv, str) and abs(float(mv)) < 1e-9:
            mv = 0  # float noise around "no gain"
        m = "" if mv is None else f"; worst measure {fmt(mv)}"
        return f"no violation found in {r.trials} trials / {r.seconds:.1f} s{m}"
    return f"unknown: {r.note or 'no reason given'}"


def _claim_domain(claim, base: strat.Domain) -> strat.Domain:
    return claims_mod.search_domain(claim, base)


def _inside(claim, cert: Certificate) -> Optional[str]:
    return claims_mod.assumption_broken(claim, cert.witness.env, cert.witness.deviation)


def _outcomes(cell: CellResult, cl: list) -> list[str]:
    return claims_mod.outcomes(cl, cell.verdict, cell.certificate.witness if cell.certificate is not None else None)


def run_cell(mech, prop_name: str, variant: str, *, budget: float, seed: int = 0,
             store_dir: Optional[str] = DEFAULT_DIR, max_trials: Optional[int] = None,
             minimize_budget: Optional[float] = None, certify: bool = False,
             domain: Optional[strat.Domain] = None, command: Optional[str] = None) -> CellResult:
    """Search one cell, minimise and store a violation (``command`` goes into the stored provenance).

    When a claim states standing assumptions (``Claim.domain``, e.g. positive demands), the search first
    looks INSIDE them (60% of the budget) -- only such a violation can refute or confirm the claim -- and
    then in the mechanism's whole setting; a violation found there is reported, and the claim is marked
    as not refuted by it."""
    import hypothesis

    prop = get_property(prop_name)
    claims = claims_for(mech, prop.name, variant)
    cell = CellResult(prop.name, variant, [(c.status, c.source) for c in claims], "unknown")
    t0, w0 = clock(), time.perf_counter()
    if certify and CERTIFIERS:
        for fn in CERTIFIERS:
            try:
                got = fn(mech, prop.name, variant, max(1.0, budget / 2))
            except Exception as exc:  # noqa: BLE001 - a certifier failing is "not certified"
                cell.note = f"certifier error: {type(exc).__name__}: {exc}"
                got = None
            if got:
                cell.certified = got
                break
    base = domain if domain is not None else strat.domain_for(mech.setting)
    scoped = claims_mod.scoped_claim(claims)
    phases: list[tuple[str, strat.Domain, Any]] = []
    if scoped is not None:
        phases.append(("claim", _claim_domain(scoped, base), lambda e, c=scoped: c.covers(e) is None))
    phases.append(("setting", base, None))
    res: Optional[SearchResult] = None
    trials, dom_used, accept_used = 0, base, None
    for k, (label, dom, accept) in enumerate(phases):
        left = max(0.5, budget - (clock() - t0))
        share = left * 0.6 if (k == 0 and len(phases) > 1) else left
        mt = None if max_trials is None else max(1, max_trials - trials)
        res = search(mech, prop.name, variant, seed=seed, budget=share, max_trials=mt, domain=dom,
                     shrink_budget=min(5.0, max(1.0, budget)), accept=accept)
        trials += res.trials
        if k == 0:
            cell.domain = dict(res.domain)
            if scoped is not None:
                cell.domain["claim_assumptions"] = list(scoped.domain)
        if res.verdict == "violated":
            dom_used, accept_used = dom, accept
            if label == "setting" and scoped is not None:
                cell.domain["violation_found_in"] = "the mechanism's whole setting (outside the claim's assumptions)"
            break
        if max_trials is not None and trials >= max_trials:
            break
    assert res is not None
    cell.trials, cell.engine = trials, res.engine
    if res.verdict == "violated" and res.certificate is not None:
        cell.time_to_first = (clock() - t0) - (res.seconds - (res.time_to_first or 0)) if len(phases) > 1 \
            else res.time_to_first
        mb = minimize_budget if minimize_budget is not None else min(15.0, max(3.0, budget))
        prov = {"kind": "search", "engine": res.engine, "seed": seed, "hypothesis": hypothesis.__version__,
                "trials_to_first": trials, "seconds_to_first": round(cell.time_to_first or 0.0, 3),
                "command": command or f"run {mech.name}"}
        done = persist(res.certificate, mech, provenance=prov, root=store_dir, claims=claims,
                       minimize_budget=mb, domain=dom_used, accept=accept_used)
        cert, record = done.certificate, done.minimality
        cell.counterexample, cell.stored_new = done.path, done.new
        cell.certificate = cert
        cell.verdict = "violated"
        cell.measure = cert.measure
        cell.size = record["size"]
        cell.minimality = record
        if res.note:
            cell.note = res.note
    else:
        cell.measure = res.worst
        if cell.certified:
            cell.verdict = "certified"
            cell.note = "; ".join(x for x in (cell.certified.get("note", ""),
                                              f"search: no violation in {trials} trials") if x)
        else:
            cell.verdict = res.verdict
            cell.note = res.note
    cell.outcomes = _outcomes(cell, claims)
    cell.seconds = clock() - t0
    cell.wall_seconds = time.perf_counter() - w0
    cell.wall_to_first = res.wall_to_first
    return cell


def run_mechanism(mech, properties: Optional[Sequence[str]] = None, *, budget: float = DEFAULT_BUDGET,
                  seed: int = 0, store_dir: Optional[str] = DEFAULT_DIR, max_trials: Optional[int] = None,
                  certify: bool = False, progress: Optional[Callable[[str], None]] = None,
                  domain: Optional[strat.Domain] = None) -> RunReport:
    t0, w0 = clock(), time.perf_counter()
    cells, skipped = plan(mech, properties)
    weights = [DEVIATION_WEIGHT if PROPERTIES[p].needs_deviation else 1.0 for p, _ in cells]
    base_dom = domain if domain is not None else strat.domain_for(mech.setting)
    report = RunReport(mech.name, mech.title, mech.setting.describe(), seed, budget, base_dom.describe(), [],
                       skipped)
    for i, ((p, v), w) in enumerate(zip(cells, weights)):
        left = budget - (clock() - t0)
        share = max(MIN_SHARE, left * w / sum(weights[i:]))
        if progress:
            progress(f"[{i + 1:2d}/{len(cells)}] {mech.name} {p}/{v} (up to {share:.1f} s) ...")
        r = run_cell(mech, p, v, budget=share, seed=seed, store_dir=store_dir, max_trials=max_trials,
                     certify=certify, domain=domain)
        report.results.append(r)
        if progress:
            extra = ""
            if r.verdict == "violated":
                extra = f" first exact counterexample after {r.time_to_first:.2f} s; minimal: " \
                        f"{describe_size(r.size)}"
            progress(f"        -> {verdict_text(r)}{extra}  [{r.claim_status()}]")
    report.seconds = clock() - t0
    report.wall_seconds = time.perf_counter() - w0
    return report


# ---------------------------------------------------------------------- serialisation
def _measure_json(m: Any) -> Any:
    if m is None:
        return None
    try:
        v = float(m)
    except (TypeError, ValueError):
        return str(m)
    if v == float("inf"):
        return "inf"
    return v


def cell_to_json(r: CellResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "property": r.property, "variant": r.variant, "claimed": r.claimed, "verdict": r.verdict,
        "counterexample": r.counterexample, "measure": _measure_json(r.measure), "trials": r.trials,
        "seconds": round(r.seconds, 3),
        # extensions (stable too, documented in docs/run-json.md)
        "claim_source": r.claim_source,
        "claims": [{"status": st, "source": src, "outcome": (r.outcomes[i] if i < len(r.outcomes) else None)}
                   for i, (st, src) in enumerate(r.claims)],
        "refuted": r.refuted, "claim_status": r.claim_status(),
        "text": verdict_text(r), "note": r.note or None, "engine": r.engine or None,
        "time_to_first": None if r.time_to_first is None else round(r.time_to_first, 3),
        "wall_seconds": round(r.wall_seconds, 3),
        "wall_to_first": None if r.wall_to_first is None else round(r.wall_to_first, 3),
        "size": r.size, "minimality": (r.minimality or {}).get("status"),
        "measure_exact": (fmt_exact(r.certificate.measure) if r.certificate is not None
                          and not isinstance(r.certificate.measure, float) else None),
        "summary": r.certificate.summary if r.certificate is not None else None,
        "certified": r.certified, "domain": r.domain,
    }
    return out


def report_to_json(rep: RunReport) -> dict[str, Any]:
    return {
        "schema": "mechverify.run/1",
        "mechanism": rep.mechanism, "seed": rep.seed, "budget": rep.budget, "domain": rep.domain,
        "results": [cell_to_json(r) for r in rep.results],
        "title": rep.title, "setting": rep.setting, "seconds": round(rep.seconds, 3),
        "wall_seconds": round(rep.wall_seconds, 3), "clock": "CPU seconds of the process (process_time)",
        "skipped": [{"property": p, "variant": v, "reason": why} for p, v, why in rep.skipped],
        "refuted": [f"{r.property}/{r.variant}" for r in rep.results if r.refuted],
    }

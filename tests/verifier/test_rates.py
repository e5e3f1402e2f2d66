"""``rates``: Wilson intervals, determinism across workers, exact re-checks of every counted violation, the
batch path agreeing with the one definition, hostile arguments, ``--out``."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from mechanisms import get
from mechverify.workloads import get as get_workload
from verifier.cli.main import main
from verifier.executors import InProcess, LocalPool
from verifier.properties import get_property
from verifier.rates import rates, sample_rng, wilson
from verifier.rates import Sampling
from verifier.config import RunConfig

SEED004_09 = {"rho": "0.9"}


def test_wilson_against_a_hand_computation():
    # k = 3, n = 10, z = 1.959964 (z^2 = 3.841459):
    #   centre = (3 + 1.920729) / 13.841459 = 0.355506
    #   half   = 1.959964 / 13.841459 * sqrt(3 * 7 / 10 + 0.960365) = 0.141601 * 1.749390 = 0.247716
    #   -> [0.107790, 0.603222]  (the textbook Wilson interval of 3/10: [0.108, 0.603])
    lo, hi = wilson(3, 10)
    assert lo == pytest.approx(0.107790, abs=2e-6) and hi == pytest.approx(0.603222, abs=2e-6)
    # k = 0: centre = half (the interval starts at 0); upper = z^2 / (n + z^2) = 3.841459 / 103.841459
    lo, hi = wilson(0, 100)
    assert lo == 0.0 and hi == pytest.approx(3.841459 / 103.841459, rel=1e-6)
    assert wilson(0, 0) == (0.0, 1.0)


def _counts(rep):
    return [(c.mechanism, c.property, c.variant, c.samples, c.violations, c.rechecked, dict(c.not_applicable),
             c.measures) for c in rep.cells]


def test_same_counts_with_one_or_two_workers():
    mechs = [get("drf-eq"), get("tsf-er")]
    sampling = Sampling("seed004", 24, points=[SEED004_09], chunk=6)
    one = rates(mechs, sampling, ["si"], RunConfig(seed=3, executor=InProcess()))
    two = rates(mechs, sampling, ["si"], RunConfig(seed=3, executor=LocalPool(2)))
    assert _counts(one) == _counts(two)
    assert one.samples_done == two.samples_done == 24


def test_a_known_violating_cell_every_violation_exact():
    # seed 004 Thm 3 / Fig. 3: DRF-alpha (equal external split) violates SI; at rho = 0.9 on the seed's workload
    rep = rates([get("drf-eq")], Sampling("seed004", 20, points=[SEED004_09]), ["si"], RunConfig(seed=0), variants={"si": ["external"]})
    c = rep.cell("drf-eq", "si", "external")
    assert c.violations > 0
    assert c.rechecked == c.violations and not c.unconfirmed  # every counted one confirmed exactly
    # the first violating sample, drawn again from its seed, is violated in exact arithmetic too
    env = get_workload("seed004").sampler(**SEED004_09)(sample_rng(0, SEED004_09, c.first_violation))
    ev = get_property("si").evaluate(get("drf-eq"), env, "external", exact=True)
    assert ev.violated and get_property("si").recheck(get("drf-eq"), ev.witness) is not None


def test_a_cell_that_cannot_fail_has_no_violation():
    # DRF is envy-free on one pool (seed 000 Sec. II-A, Ghodsi et al.): 0 violations whatever the sample
    rep = rates([get("drf")], Sampling("uniform", 200, points=[{"servers": "1"}]), ["ef"], RunConfig(seed=1))
    for c in rep.cells:
        assert c.evaluated == 200 and c.violations == 0


def test_a_rejected_instance_is_not_applicable():
    rep = rates([get("drf")], Sampling("seed004", 5, points=[SEED004_09]), ["si"], variants={"si": ["external"]})
    c = rep.cells[0]
    assert c.samples == 5 and c.evaluated == 0 and c.violations == 0
    assert sum(c.not_applicable.values()) == 5 and "rejects the instance" in next(iter(c.not_applicable))


def test_deviation_properties_are_lower_bounds():
    rep = rates([get("drf")], Sampling("uniform", 4, points=[{"servers": "1"}], deviations=2), ["sp"],
                variants={"sp": ["demand"]})
    from verifier.report.rates import cell_to_json

    d = cell_to_json(rep.cells[0])
    assert d["deviations_per_sample"] == 2 and d["bound"] == "lower" and "LOWER bound" in d["bound_text"]
    assert d["violations"] == 0  # DRF is strategy-proof (Ghodsi et al.): nothing to find


def _envs(workload, point, n, seed=0):
    draw = get_workload(workload).sampler(**point)
    return [draw(sample_rng(seed, point, i)) for i in range(n)]


def test_batch_allocations_and_si_match_the_one_definition():
    # the vectorised float paths agree with the mechanism's float path and SI's evaluate (up to float rounding)
    for mech, workload, point, variants in (("drf", "alibaba2018", {}, ("per-server-split", "bounded")),
                                             ("per-server-drf", "google2011", {"servers": "4", "users": "5"},
                                              ("per-server-split",))):
        m = get(mech)
        envs = _envs(workload, point, 40)
        batch = m.batch(envs)
        one = [m(e, exact=False) for e in envs]
        for a, b in zip(one, batch):
            assert b is not None
            assert np.allclose(np.array(a.x, dtype=float), np.array(b.x, dtype=float), rtol=1e-9, atol=1e-12)
        prop = get_property("si")
        for v in variants:
            got = prop.evaluate_batch(m, envs, one, v)
            want = [prop.evaluate(m, e, v, exact=False, alloc=a) for e, a in zip(envs, one)]
            for g, w in zip(got, want):
                assert g.violated == w.violated
                assert float(g.measure) == pytest.approx(float(w.measure), rel=1e-9)


def _cli(capsys, *argv):
    code = main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("argv, flag", [
    (["--workload", "seed004", "--samples", "0"], "--samples"),
    (["--workload", "seed004", "--rho", "1.5"], "--rho"),
    (["--workload", "nosuch"], "nosuch"),
    (["--workload", "seed004", "--properties", "nosuch"], "nosuch"),
    (["--workload", "seed004", "--param", "bandwidth"], "--param"),
])
def test_hostile_arguments_are_one_line(capsys, argv, flag):
    code, out, err = _cli(capsys, "rates", "tsf-er", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err


def test_out_writes_reports_and_plots(capsys, tmp_path):
    out = tmp_path / "r"
    code, stdout, _ = _cli(capsys, "rates", "drf-eq,tsf-er", "--workload", "seed004", "--rho", "0.5,0.9",
                           "--samples", "6", "--properties", "si/external", "--jobs", "1", "--quiet",
                           "--format", "json", "--out", str(out))
    assert code == 0
    data = json.loads(stdout)
    assert data["samples_done"] == 12 and len(data["cells"]) == 4
    c = data["cells"][0]
    assert set(c) >= {"samples", "violations", "rate", "ci95", "measure", "not_applicable", "rechecked"}
    for name in ("rates.json", "rates.md", "rates.html", "rate_si_external.png", "rate_si_external.svg",
                 "measure_si_external.png"):
        assert (out / name).is_file(), name
    with open(out / "rate_si_external.png", "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    svg = (out / "rate_si_external.svg").read_text()
    assert "Matplotlib" in svg and "<svg" in svg
    page = (out / "rates.html").read_text()
    assert page.count("<svg") >= 2 and "tsf-er" in page
    assert json.loads((out / "rates.json").read_text())["cells"] == data["cells"]


def test_user_mechanism_by_reference(capsys):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "my_mechanisms.py")
    code, out, err = _cli(capsys, "rates", f"{os.path.normpath(path)}:drf_float", "--workload", "uniform",
                          "--servers", "1", "--samples", "5", "--properties", "si/per-server-split", "--jobs", "1",
                          "--quiet", "--format", "json")
    assert code == 0, err
    cell = json.loads(out)["cells"][0]
    assert cell["samples"] == 5 and cell["errors"] == {}


def test_same_counts_with_jobs_1_and_a_dask_cluster(capsys):
    """The CLI's counts (and every measure) are the same in this process and on a Dask cluster: 260 samples are
    two chunks (250 + 10), drawn by whichever worker gets them."""
    from distributed import LocalCluster

    argv = ["rates", "drf-eq", "--workload", "seed004", "--rho", "0.9", "--samples", "260", "--properties",
            "si/external", "--quiet", "--format", "json"]

    def counts(text):
        data = json.loads(text)
        return data["samples_done"], [{k: c[k] for k in ("mechanism", "variant", "samples", "evaluated", "violations",
                                                         "rechecked", "not_applicable", "errors", "measure",
                                                         "first_violation_sample")} for c in data["cells"]]

    code, out, err = _cli(capsys, *argv, "--jobs", "1")
    assert code == 0, err
    one = counts(out)
    assert one[0] == 260 and one[1][0]["violations"] > 0  # drf-eq violates SI at rho 0.9 (the cell above)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        code, out, err = _cli(capsys, *argv, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert code == 0, err
    assert counts(out) == one


@pytest.mark.wallclock
def test_a_budget_cut_leaves_consistent_cells():
    """A budget far shorter than the work: the report says it stopped, every cell took about as many samples
    (blocks in turn for every mechanism), and a cell holds exactly one measure per evaluated instance (a sample
    cut mid-evaluation is not counted at all)."""
    import time

    mechs = [get("tsf-er-online"), get("drfh")]  # tsf-er-online: ~0.5 s per 20-server instance
    t0 = time.monotonic()
    rep = rates(mechs, Sampling("google2011", 250, points=[{"servers": 20}]), ["si", "po"], RunConfig(seed=0, budget=2.0, executor=InProcess()))
    assert time.monotonic() - t0 < 2.0 + 3.0  # the budget plus at most a few single steps
    assert rep.stopped and rep.samples_done < 250
    sampled = [c for c in rep.cells if c.samples]
    assert {c.mechanism for c in sampled} == {"tsf-er-online", "drfh"}
    for c in rep.cells:
        assert c.samples >= rep.samples_done
        assert len(c.measures) == c.evaluated
        assert c.violations <= c.rechecked


def test_the_chunk_stream_is_sample_rng():
    """rate_chunk's one reused Philox generator (its counter set per sample) gives sample_rng's numbers."""
    from verifier.rate_records import _Stream

    point = {"rho": "0.9"}
    stream = _Stream(3, point)
    for i in list(range(40)) + [2 ** 40]:
        fresh, reused = sample_rng(3, point, i), stream.at(i)
        assert fresh.integers(0, 7, size=5).tolist() == reused.integers(0, 7, size=5).tolist()
        assert fresh.gamma(4.0, 200.0, size=3).tolist() == reused.gamma(4.0, 200.0, size=3).tolist()
        assert fresh.integers(2 ** 62) == reused.integers(2 ** 62)


def test_measure_distribution_with_infinite_and_missing_measures():
    # EF's envy ratio is inf when a user with nothing envies: quantiles are sample values there (linear
    # interpolation between two infinities is NaN); a measure the evaluation did not give (NaN) is counted apart
    from verifier.rate_records import CellRates
    c = CellRates("m", "ef", "placement-aware", {}, measures=[1.0, float("inf"), float("inf"), float("nan"), 2.0])
    d = c.distribution()
    assert d["n"] == 4 and d["without_measure"] == 1 and d["infinite"] == 2
    assert d["mean"] == 1.5 and d["min"] == 1.0 and d["max"] == float("inf")
    # sorted 1, 2, inf, inf: the inverted-CDF median is the 2nd value (0.5 x 4 = 2)
    assert d["quantiles"]["0.5"] == 2.0 and d["quantiles"]["0.95"] == float("inf")
    finite = CellRates("m", "ef", "placement-aware", {}, measures=[1.0, 2.0, 3.0, 4.0]).distribution()
    assert finite["quantiles"]["0.5"] == 2.5  # linear interpolation between 2 and 3

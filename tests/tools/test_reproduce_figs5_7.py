"""tools/reproduce_figs5_7.py (``reproduce.py seed001-figs5-8``): the timeline look-up, Fig. 7's task completion
ratios on hand-made runs, and the three schedulers over one window (small)."""
from __future__ import annotations

import importlib.util
import json
import os

import pytest

from tests import helpers

TOOL = os.path.join(helpers.ROOT, "tools", "reproduce_figs5_7.py")


@pytest.fixture(scope="module")
def figs():
    spec = importlib.util.spec_from_file_location("reproduce_figs5_7", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_timeline_lookup(figs):
    tl = [(5.0, 0.1), (15.0, 0.2), (35.0, 0.4)]  # buckets [0, 10), [10, 20), [30, 40); [20, 30) uncovered
    assert figs._at(tl, 0.0) == 0.1 and figs._at(tl, 12.0) == 0.2 and figs._at(tl, 39.0) == 0.4
    assert figs._at(tl, 25.0) is None and figs._at(tl, 41.0) is None and figs._at([], 1.0) is None
    # buckets [0, 1), [1, 2) whose midpoints were stored rounded to the millisecond (1.5 as 1.4996 here): the gap
    # says width 0.9996, yet 1.9999 is in the second bucket (within the rounding)
    assert figs._at([(0.5, 0.1), (1.4996, 0.2)], 1.9999) == 0.2


def _run(finished: dict, unfinished: dict) -> dict:
    """The parts of a ``simulation.json`` the ratios read: finished jobs ``{name: tasks}``, unfinished ones
    ``{name: (tasks done, tasks)}``."""
    return {"jobs_table": [{"name": n, "tasks": k, "arrival": 0, "jct": 1} for n, k in finished.items()],
            "unfinished_jobs": [{"name": n, "tasks": k, "arrival": 0, "tasks_done": d}
                                for n, (d, k) in unfinished.items()]}


# Six users, tasks done at the window's end (Best-Fit / Slots):
#   j1 (4 tasks): finished under both              -> 1 / 1       equal, complete under both
#   j2 (10):      7 / 3 done                        -> 0.7 / 0.3   higher
#   j3 (2):       0 / 0 done                        -> 0 / 0       equal, none done
#   j4 (5):       finished / 2 done                 -> 1 / 0.4     higher, complete under Best-Fit only
#   j5 (8):       6 done / finished                 -> 0.75 / 1    lower, complete under Slots only
#   j6 (3):       arrived at the cut, in neither run -> 0 / 0      equal, none done
# higher 2, equal 3 (1 complete, 2 none), lower 1; Best-Fit-only complete 1, Slots-only 1;
# mean ratios: Best-Fit (1 + 0.7 + 0 + 1 + 0.75 + 0) / 6 = 3.45 / 6 = 0.575, Slots (1 + 0.3 + 0 + 0.4 + 1 + 0) / 6
# = 2.7 / 6 = 0.45.
def test_completion_ratios_of_hand_made_runs(figs):
    best_fit = _run({"j1": 4, "j4": 5}, {"j2": (7, 10), "j3": (0, 2), "j5": (6, 8)})
    slots = _run({"j1": 4, "j5": 8}, {"j2": (3, 10), "j3": (0, 2), "j4": (2, 5)})
    jobs = [{"name": n, "tasks": k} for n, k in (("j1", 4), ("j2", 10), ("j3", 2), ("j4", 5), ("j5", 8), ("j6", 3))]
    f7 = figs.completion_ratios(best_fit, slots, jobs)
    assert {u["name"]: (u["best_fit"], u["slots"], u["vs_slots"]) for u in f7["per_user"]} == {
        "j1": (1, 1, "equal"), "j2": (0.7, 0.3, "higher"), "j3": (0, 0, "equal"), "j4": (1, 0.4, "higher"),
        "j5": (0.75, 1, "lower"), "j6": (0, 0, "equal")}
    assert (f7["users"], f7["higher"], f7["equal"], f7["lower"]) == (6, 2, 3, 1)
    assert (f7["equal_complete"], f7["equal_none"]) == (1, 2)
    assert (f7["best_fit_only_complete"], f7["slots_only_complete"]) == (1, 1)
    assert f7["mean_best_fit"] == pytest.approx(0.575) and f7["mean_slots"] == pytest.approx(0.45)


def test_seed001_figs5_8_compares_the_three_schedulers_and_reads_back(figs, tmp_path):
    out = str(tmp_path)
    text = figs.seed001_figs5_8(0, out, jobs=8, servers=4, budget=120)
    data = json.load(open(os.path.join(out, "figs5-7.json")))
    assert set(data["runs"]) == {"drfh-best-fit", "drfh-first-fit", "slots"}
    # no run stopped: the window is the arrivals, and every run ends there
    assert data["window"] == data["horizon"]
    for m, r in data["runs"].items():
        assert r["stopped"] is None and r["end_time"] == pytest.approx(data["window"]) and r["finished"] <= 8
        assert 0 <= r["utilisation_window"]["cpu"] <= 1 + 1e-9
    both = min(data["runs"]["drfh-best-fit"]["finished"], data["runs"]["slots"]["finished"])
    assert sum(row["jobs"] for row in data["fig6b"]) <= both
    f7 = data["fig7"]
    assert f7["users"] == 8 and f7["higher"] + f7["equal"] + f7["lower"] == 8
    # a job finished in the window has ratio 1 under that run
    for m, key in (("drfh-best-fit", "best_fit"), ("slots", "slots")):
        assert sum(u[key] == 1 for u in f7["per_user"]) >= data["runs"][m]["finished"]
    for name in ("fig5.png", "fig6.png", "fig7.png", "figs5-7.md"):
        assert os.path.getsize(os.path.join(out, name)) > 0
    assert "Fig. 7 (task completion ratio" in text
    # read back: the same numbers without running again
    again = figs.seed001_figs5_8(0, out, jobs=8, servers=4, budget=120, recompute=False)
    assert again == text


def test_the_runs_after_a_budget_stop_end_at_the_window(figs, tmp_path, monkeypatch):
    # Best-Fit DRFH's budget is gone at once (it stops after its first step with somebody present); the runs after
    # it are given the window's end as theirs, so all tasks done are counted at the same time
    real = figs.simulate_run
    monkeypatch.setattr(figs, "simulate_run", lambda mech, ex, budget, points=400:
                        real(mech, ex, 1e-9 if "best-fit" in mech.name else budget, points))
    figs.seed001_figs5_8(0, str(tmp_path), jobs=8, servers=4, budget=120)
    data = json.load(open(os.path.join(str(tmp_path), "figs5-7.json")))
    runs = data["runs"]
    assert runs["drfh-best-fit"]["stopped"] and data["window"] < data["horizon"]
    assert data["window"] == round(runs["drfh-best-fit"]["end_time"], 3)
    for m in ("drfh-first-fit", "slots"):
        assert runs[m]["stopped"] is None and runs[m]["end_time"] == pytest.approx(data["window"])
    assert data["fig7"]["users"] <= 8

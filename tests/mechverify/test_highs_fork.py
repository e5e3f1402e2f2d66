"""A process forked after HiGHS solved a MIP can solve MIPs too (``mechverify.highs`` resets HiGHS's thread pool
in every forked child).  Without that reset the child's first MIP waits for ever for the parent's pool threads,
which a fork does not copy: an audit's whole-task PO cell in a campaign worker, and the MIP worker of
``mechverify.domination``, hung until killed (issue 36's stuck ``armada-drf po/whole-task`` solve)."""
from __future__ import annotations

import multiprocessing as mp
from fractions import Fraction

import pytest

from mechverify.lp import LinearProgram, solve

# The child's MIP either answers (at once: the model below solves in well under a second) or never does; the
# limit only keeps a regression from hanging the suite.
HANG = 60.0


def knapsack_mip() -> tuple:
    """A small integer program HiGHS solves by branch and bound (so on its task pool): 12 items, 3 knapsacks.
    Its optimum is checked against brute force in the test."""
    lp = LinearProgram(maximize=True)
    value = [7, 9, 5, 12, 14, 6, 12, 3, 8, 11, 4, 10]
    weight = [[3, 4, 2, 6, 7, 3, 5, 1, 4, 5, 2, 5], [2, 5, 3, 4, 6, 2, 6, 2, 3, 4, 1, 6], [4, 3, 2, 5, 5, 4, 4, 2, 2, 6, 3, 4]]
    cols = [lp.add_var(0, 1, v, integer=True) for v in value]
    for w in weight:
        lp.add_row({c: w[i] for i, c in enumerate(cols)}, None, 17)
    res = solve(lp)
    return res.status, res.objective


def _brute_force() -> int:
    value = [7, 9, 5, 12, 14, 6, 12, 3, 8, 11, 4, 10]
    weight = [[3, 4, 2, 6, 7, 3, 5, 1, 4, 5, 2, 5], [2, 5, 3, 4, 6, 2, 6, 2, 3, 4, 1, 6], [4, 3, 2, 5, 5, 4, 4, 2, 2, 6, 3, 4]]
    best = 0
    for mask in range(1 << 12):
        take = [i for i in range(12) if mask >> i & 1]
        if all(sum(w[i] for i in take) <= 17 for w in weight):
            best = max(best, sum(value[i] for i in take))
    return best


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")
def test_a_process_forked_after_a_mip_solves_mips():
    status, objective = knapsack_mip()  # starts HiGHS's pool in this process
    assert status == "optimal" and Fraction(objective) == _brute_force()
    with mp.get_context("fork").Pool(2) as pool:
        answers = pool.starmap_async(knapsack_mip, [()] * 2)
        try:
            got = answers.get(timeout=HANG)
        except mp.TimeoutError:
            pool.terminate()
            pytest.fail("a forked child's MIP never answered: HiGHS's thread pool was not reset after fork")
    assert all(s == "optimal" and Fraction(o) == _brute_force() for s, o in got)

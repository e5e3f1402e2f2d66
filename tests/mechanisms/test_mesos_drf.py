"""``mesos-drf`` (src/mechanisms/mesos_drf.py): upstream's own sorter tests as ORDER tests of our ordering,
the DRF paper's example, and the tie-breaks that distinguish it from First-Fit DRFH.

Upstream: apache/mesos @ c1b42f79d157aa900be5cbb0c1023f1479962aa7, src/tests/sorter_tests.cpp.  Each order
test replays one upstream test's calls (``allocated`` adds the resources and counts one allocation,
``unallocated`` subtracts without touching the count, ``remove`` drops the client, ``deactivate`` hides it
from the sort, ``addSlave``/``removeSlave`` set the total) and checks every ``EXPECT_EQ(..., sorter.sort())``
of it against :func:`mechanisms.mesos_drf.sort_clients`.
"""
from __future__ import annotations

from fractions import Fraction as F

import mechanisms
from mechanisms.mesos_drf import UPSTREAM, drf_share, sort_clients
from mechverify.allocation import feasibility_violations
from tests.helpers import env_of

COMMIT = "c1b42f79d157aa900be5cbb0c1023f1479962aa7"


class Sorter:
    """The flat part of upstream's sorter API, over our ordering (cpus, mem)."""

    def __init__(self, cpus, mem):
        self.total = (F(cpus), F(mem))
        self.alloc, self.count, self.weight, self.inactive = {}, {}, {}, set()

    def add(self, name, weight=1):
        self.alloc[name], self.count[name], self.weight[name] = (F(0), F(0)), 0, F(weight)

    def allocated(self, name, cpus, mem):
        a = self.alloc[name]
        self.alloc[name] = (a[0] + F(cpus), a[1] + F(mem))
        self.count[name] += 1

    def unallocated(self, name, cpus, mem):
        a = self.alloc[name]
        self.alloc[name] = (a[0] - F(cpus), a[1] - F(mem))

    def remove(self, name):
        for d in (self.alloc, self.count, self.weight):
            del d[name]

    def sort(self):
        return sort_clients([(n, self.alloc[n], self.count[n], self.weight[n]) for n in self.alloc
                             if n not in self.inactive], self.total)


def test_upstream_drf():
    """sorter_tests.cpp, TEST(DRFSorterTest, DRF), apache/mesos @ c1b42f79d157aa900be5cbb0c1023f1479962aa7."""
    s = Sorter(100, 100)
    s.add("a"), s.allocated("a", 5, 5)
    s.add("b"), s.allocated("b", 6, 6)
    assert s.sort() == ["a", "b"]  # a = .05, b = .06
    s.add("c"), s.allocated("c", 1, 1)
    s.add("d"), s.allocated("d", 3, 1)
    assert s.sort() == ["c", "d", "a", "b"]  # a = .05, b = .06, c = .01, d = .03
    s.remove("a")
    s.unallocated("b", 4, 4)
    assert s.sort() == ["c", "b", "d"]  # b = .02, c = .01, d = .03
    s.add("e"), s.allocated("e", 1, 5)
    s.total = (F(50), F(100))
    assert s.sort() == ["c", "b", "e", "d"]  # b = .04, c = .02, d = .06, e = .05
    s.total = (F(50), F(200))
    s.add("f"), s.allocated("f", 5, 1)
    s.allocated("c", 0, 15)
    assert s.sort() == ["e", "b", "d", "c", "f"]  # b = .04, c = .08, d = .06, e = .025, f = .1
    s.inactive.add("d")
    assert s.sort() == ["e", "b", "c", "f"]
    s.inactive.discard("d")
    assert s.sort() == ["e", "b", "d", "c", "f"]


def test_upstream_wdrf():
    """sorter_tests.cpp, TEST(DRFSorterTest, WDRF), apache/mesos @ c1b42f79d157aa900be5cbb0c1023f1479962aa7."""
    s = Sorter(100, 100)
    s.add("a"), s.allocated("a", 5, 5)
    s.add("b", weight=2), s.allocated("b", 6, 6)
    assert s.sort() == ["b", "a"]  # a = .05, b = .03
    s.add("c"), s.allocated("c", 4, 4)
    assert s.sort() == ["b", "c", "a"]  # c = .04
    s.add("d", weight=10), s.allocated("d", 10, 20)
    assert s.sort() == ["d", "b", "c", "a"]  # d = .2 / 10 = .02
    s.remove("b")
    assert s.sort() == ["d", "c", "a"]
    s.allocated("d", 10, 25)
    assert s.sort() == ["c", "d", "a"]  # d = .45 / 10 = .045
    s.add("e", weight=F(1, 10)), s.allocated("e", 1, 1)
    assert s.sort() == ["c", "d", "a", "e"]  # e = .01 / .1 = .1
    s.remove("a")
    assert s.sort() == ["c", "d", "e"]


def test_upstream_allocation_count_tie_break():
    """sorter_tests.cpp, TEST(DRFSorterTest, AllocationCountTieBreak), apache/mesos @
    c1b42f79d157aa900be5cbb0c1023f1479962aa7: equal shares (3%) are ordered by allocation count."""
    s = Sorter(100, 100)
    for n in "abcde":
        s.add(n)
    s.allocated("a", 3, 3), s.allocated("b", 3, 3)
    for _ in range(3):
        s.allocated("c", 1, 1)
    s.allocated("d", 2, 2), s.allocated("d", 1, 1)
    s.allocated("e", 3, 3)
    assert s.sort() == ["a", "b", "e", "d", "c"]  # counts {a, b, e} = 1, d = 2, c = 3
    s.unallocated("c", 3, 3)  # the count is not reset
    assert s.sort() == ["c", "a", "b", "e", "d"]
    s.allocated("c", 3, 3)
    assert s.sort() == ["a", "b", "e", "d", "c"]  # c = 4
    s.unallocated("c", 3, 3), s.allocated("c", 3, 3)
    assert s.sort() == ["a", "b", "e", "d", "c"]  # c = 5
    s.inactive.add("a")
    s.unallocated("a", 1, 3), s.allocated("a", 1, 3)  # an inactive client's allocation counts too
    assert s.sort() == ["b", "e", "d", "c"]
    s.inactive.discard("a")
    assert s.sort() == ["b", "e", "a", "d", "c"]  # {b, e} = 1, {a, d} = 2, c = 5


def test_share_skips_zero_totals_and_divides_by_the_weight():
    assert drf_share((F(3), F(5)), (F(10), F(0)), F(2)) == F(3, 20)  # mem (total 0) is skipped
    assert drf_share((F(0), F(0)), (F(0), F(0))) == 0


def test_drf_paper_example_whole_tasks():
    """Ghodsi et al., NSDI 2011, Sec. 4: 9 CPU, 18 GB; A <1 CPU, 4 GB>, B <3 CPU, 1 GB>.
    Per task: A's dominant share is mem 4/18 = 2/9 (cpu 1/9); B's is cpu 3/9 = 1/3 (mem 1/18).
      1. A 0, B 0: tie, counts 0, 0 -> name: A (A = 2/9)
      2. B 0 < 2/9 -> B (B = 1/3)
      3. A 2/9 < 1/3 -> A (A = 4/9)
      4. B 1/3 < 4/9 -> B (B = 2/3)
      5. A 4/9 < 2/3 -> A (A = 2/3); used <3 + 6, 12 + 2> = <9, 14>
      6. A = B = 2/3, counts 3 > 2 -> B first, but no CPU is left for either: stop.
    A 3 tasks, B 2 tasks (the paper's DRF allocation <3 CPU, 12 GB> and <6 CPU, 2 GB>)."""
    env = env_of(["cpu", "mem"], [[9, 18]], [{"name": "A", "demand": [1, 4]}, {"name": "B", "demand": [3, 1]}])
    a = mechanisms.allocate("mesos-drf", env)
    assert a.exact and a.x == ((3,), (2,)) and a.info["steps"] == 5


def test_ties_by_allocation_count_then_name():
    """One server, 6 cpu; u1 <1> (share 1/6 per task), u2 <2> (1/3):
      1. tie 0/0, counts 0 -> name u1 (1/6); 2. u2 (1/3); 3. u1 1/6 < 1/3 (1/3);
      4. tie 1/3, counts u1 2 > u2 1 -> u2 (2/3); cpu used 2 + 4 = 6: stop.  u1 2, u2 2.
    First-Fit DRFH breaks the tie of step 4 by index instead (u1 3/6), then u2 needs 2 > 1 left and u1
    takes the last cpu: u1 4, u2 1."""
    env = env_of(["cpu"], [[6]], [{"demand": [1]}, {"demand": [2]}])
    assert mechanisms.allocate("mesos-drf", env).totals() == (2, 2)
    assert mechanisms.allocate("drfh-first-fit", env).totals() == (4, 1)
    # names, not positions: "b" listed first loses the tie for the only task to "a"
    env = env_of(["cpu"], [[1]], [{"name": "b", "demand": [1]}, {"name": "a", "demand": [1]}])
    assert mechanisms.allocate("mesos-drf", env).totals() == (0, 1)


def test_many_servers_bounds_weights_placement():
    """s1 <2 cpu>, s2 <4 cpu>; pooled 6.  u1 <2> weight 2, bound 2; u2 <1>, eligible s2 only.
    Weighted shares per task: u1 (2/6)/2 = 1/6, u2 1/6.
      1. tie 0, counts 0 -> u1 by name, on s1 (the first fitting server; s1 left 0): u1 1/6
      2. u2 0 < 1/6 -> u2 on s2 (s1 is not eligible; s2 left 3): u2 1/6
      3. tie 1/6, counts 1, 1 -> u1 by name: s1 is full -> s2 (left 1); its bound 2 is reached
      4. u2 on s2 (left 0); nobody can take more.
    u1 x = (1, 1), u2 x = (0, 2)."""
    env = env_of(["cpu"], [[2], [4]], [{"demand": [2], "weight": 2, "tasks": 2}, {"demand": [1], "eligible": ["s2"]}])
    a = mechanisms.allocate("mesos-drf", env)
    assert a.x == ((1, 1), (0, 2))
    assert feasibility_violations(env, a.x) == []


def test_list_shows_upstream_file_and_commit():
    m = mechanisms.get("mesos-drf")
    assert COMMIT in m.source and "src/master/allocator/mesos/sorter/drf/sorter.cpp" in m.source
    assert m.source == UPSTREAM and not m.setting.divisible and not m.setting.single_server

"""``mesos-drf`` (src/mechanisms/ports/mesos.py): upstream's own sorter tests as ORDER tests of our ordering,
the DRF paper's example, the tie-breaks that distinguish it from First-Fit DRFH, and queue trees (roles).

Upstream: apache/mesos @ c1b42f79d157aa900be5cbb0c1023f1479962aa7, src/tests/sorter_tests.cpp.  Each order
test replays one upstream test's calls (``allocated`` adds the resources and counts one allocation,
``unallocated`` subtracts without touching the count, ``remove`` drops the client, ``deactivate`` hides it
from the sort, ``addSlave``/``removeSlave`` set the total) and checks every ``EXPECT_EQ(..., sorter.sort())``
of it against :func:`mechanisms.ports.mesos.sort_clients` (flat) or :func:`mechanisms.ports.mesos.sort_tree`
(hierarchical: client paths).
"""
from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.ports.mesos import DEFAULT_ROLE, UPSTREAM, drf_share, sort_clients, sort_tree, user_order
from mechverify.allocation import feasibility_violations
from mechverify.instances import parse_environment
from tests.helpers import env_of, run_cli

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
    assert "src/master/allocator/mesos/hierarchical.cpp" in m.source
    assert m.source == UPSTREAM and not m.setting.divisible and not m.setting.single_server
    assert m.setting.hierarchy and "queue tree" in m.setting.describe()
    out = run_cli("list")
    assert out.returncode == 0
    block = out.stdout[out.stdout.index("mesos-drf  --"):].split("\n")
    assert block[1].strip() == f"source:  {UPSTREAM}" and "queue tree" in block[2]


# ---------------------------------------------------------------------- hierarchical sorter (roles)
class TreeSorter:
    """Upstream's hierarchical sorter API over :func:`sort_tree` (cpus, mem), in exact numbers (``num=F``) or
    in ``double`` like upstream (``num=float``).  Counts as upstream keeps them: ``allocated`` counts one at
    the client's node and at every ancestor (sorter.cpp ``allocated``); nothing decreases a count; a node
    lives while it is a client or a prefix of one (``remove``), so the counts of the nodes that remain are
    passed to ``sort_tree`` as ``counts`` (the virtual leaf ``"b/."`` keeps the client's own count)."""

    def __init__(self, cpus, mem, num=F):
        self.num = num
        self.total = (num(cpus), num(mem))
        self.alloc, self.own, self.node_count, self.weights, self.inactive = {}, {}, {}, {}, set()

    def add(self, path):
        self.alloc[path], self.own[path] = (self.num(0), self.num(0)), 0
        self.inactive.add(path)  # upstream adds an inactive leaf; ``activate`` follows

    def activate(self, path):
        self.inactive.discard(path)

    def deactivate(self, path):
        self.inactive.add(path)

    def update_weight(self, path, w):
        self.weights[path] = self.num(w)

    @staticmethod
    def _prefixes(path):
        seg = path.split("/")
        return ["/".join(seg[:i]) for i in range(1, len(seg) + 1)]

    def allocated(self, path, cpus, mem):
        a = self.alloc[path]
        self.alloc[path] = (a[0] + self.num(cpus), a[1] + self.num(mem))
        self.own[path] += 1
        for p in self._prefixes(path):
            self.node_count[p] = self.node_count.get(p, 0) + 1

    def update(self, path, cpus, mem):  # ``update``: a new allocation, the count unchanged
        self.alloc[path] = (self.num(cpus), self.num(mem))

    def remove(self, path):
        del self.alloc[path], self.own[path]
        self.inactive.discard(path)
        alive = {p for c in self.alloc for p in self._prefixes(c)}
        self.node_count = {p: k for p, k in self.node_count.items() if p in alive}

    def sort(self):
        return sort_tree([(p, self.alloc[p], self.own[p]) for p in self.alloc], self.total, self.weights,
                         inactive=self.inactive, counts=self.node_count)


def _client(s, path, cpus=None, mem=None):
    s.add(path), s.activate(path)
    if cpus is not None:
        s.allocated(path, cpus, mem)


@pytest.mark.parametrize("num", [F, float])
def test_upstream_hierarchical_allocation(num):
    """sorter_tests.cpp, TEST(DRFSorterTest, HierarchicalAllocation), apache/mesos @
    c1b42f79d157aa900be5cbb0c1023f1479962aa7.  The same orders in exact and in double arithmetic."""
    s = TreeSorter(100, 100, num)
    s.add("a"), s.add("b/c"), s.add("b/d")
    s.activate("a"), s.activate("b/c"), s.activate("b/d")
    assert s.sort() == ["a", "b/c", "b/d"]  # all 0, counts 0: by path ("a" < "b", "b/c" < "b/d")
    s.allocated("a", 6, 6)
    assert s.sort() == ["b/c", "b/d", "a"]  # a = .06, b = 0
    s.allocated("b/c", 4, 4)
    s.allocated("b/d", 3, 3)
    assert s.sort() == ["a", "b/d", "b/c"]  # a = .06 < b = .07 (the subtree's sum); b/d = .03 < b/c = .04
    s.allocated("a", 2, 2)
    assert s.sort() == ["b/d", "b/c", "a"]  # a = .08 > b = .07
    _client(s, "b/e/f")
    assert s.sort() == ["b/e/f", "b/d", "b/c", "a"]
    s.allocated("b/e/f", 3.5, 3.5)
    assert s.sort() == ["a", "b/d", "b/e/f", "b/c"]  # b = .105 > a = .08; b/e = .035
    s.remove("b/e/f")
    assert s.sort() == ["b/d", "b/c", "a"]
    s.update("b/c", 1, 1)
    assert s.sort() == ["b/c", "b/d", "a"]
    _client(s, "b/e/f", 3.5, 3.5)
    assert s.sort() == ["b/c", "b/d", "b/e/f", "a"]  # b = .075 < a = .08


@pytest.mark.parametrize("num", [F, float])
def test_upstream_hierarchical_iteration_order(num):
    """sorter_tests.cpp, TEST(DRFSorterTest, HierarchicalIterationOrder), apache/mesos @
    c1b42f79d157aa900be5cbb0c1023f1479962aa7: client "d" with a child client "d/e" is the virtual leaf
    "d/." inside "d"; in a tie it goes first ("d/." < "d/e")."""
    s = TreeSorter(100, 100, num)
    for c in ("a/b", "c", "d", "d/e"):
        _client(s, c)
    assert s.sort() == ["a/b", "c", "d", "d/e"]
    s.allocated("c", 8, 8)
    assert s.sort() == ["a/b", "d", "d/e", "c"]
    s.allocated("d", 3, 3)
    s.allocated("d/e", 2, 2)
    assert s.sort() == ["a/b", "d/e", "d", "c"]  # inside d: d/e .02 < d/. .03; d = .05 < c = .08
    s.allocated("a/b", 6, 6)
    assert s.sort() == ["d/e", "d", "a/b", "c"]


@pytest.mark.parametrize("num", [F, float])
def test_upstream_add_child_to_leaf(num):
    """sorter_tests.cpp, TEST(DRFSorterTest, AddChildToLeaf), apache/mesos @
    c1b42f79d157aa900be5cbb0c1023f1479962aa7: the weight of "a" applies to the inner node "a" (against "b"),
    the virtual leaf "a/." competes with weight 1 against "a/c"."""
    s = TreeSorter(100, 100, num)
    _client(s, "a", 10, 10)
    _client(s, "b", 6, 6)
    assert s.sort() == ["b", "a"]
    _client(s, "a/c", 5, 5)
    assert s.sort() == ["b", "a/c", "a"]  # a = .15 > b = .06; inside a: a/c .05 < a/. .10
    s.remove("a")
    assert s.sort() == ["a/c", "b"]  # a = .05 < b = .06
    _client(s, "a", 10, 10)
    assert s.sort() == ["b", "a/c", "a"]
    s.update_weight("a/c", F(1, 5) if num is F else 0.2)
    assert s.sort() == ["b", "a", "a/c"]  # a/c .05 / .2 = .25 > a/. .10 (weight 1)
    s.update_weight("a", 3)
    assert s.sort() == ["a", "a/c", "b"]  # a = .15 / 3 = .05 < b = .06; a/. still .10 < a/c .25
    s.update_weight("a/c", 1)
    assert s.sort() == ["a/c", "a", "b"]


@pytest.mark.parametrize("num", [F, float])
def test_upstream_add_child_to_internal_and_inactive_leaf(num):
    """sorter_tests.cpp, TEST(DRFSorterTest, AddChildToInternal) and TEST(DRFSorterTest,
    AddChildToInactiveLeaf), apache/mesos @ c1b42f79d157aa900be5cbb0c1023f1479962aa7."""
    s = TreeSorter(100, 100, num)
    _client(s, "x/a", 10, 10)
    _client(s, "x/b", 6, 6)
    assert s.sort() == ["x/b", "x/a"]
    _client(s, "x", 7, 7)
    assert s.sort() == ["x/b", "x", "x/a"]
    _client(s, "z", 20, 20)
    assert s.sort() == ["z", "x/b", "x", "x/a"]  # x = .23 > z = .20
    s.remove("x")
    assert s.sort() == ["x/b", "x/a", "z"]  # x = .16
    s = TreeSorter(100, 100, num)
    _client(s, "a", 10, 10)
    _client(s, "b", 6, 6)
    s.deactivate("a")
    assert s.sort() == ["b"]
    _client(s, "a/c", 5, 5)  # the inactive "a" becomes the inactive virtual leaf "a/."
    assert s.sort() == ["b", "a/c"]


def test_upstream_change_weight_on_subtree():
    """sorter_tests.cpp, TEST(DRFSorterTest, ChangeWeightOnSubtree), apache/mesos @
    c1b42f79d157aa900be5cbb0c1023f1479962aa7; total cpus 100, mem 100; role weights b = 3, a = 2.

    In ``double`` (upstream) every expectation holds.  In exact numbers the third one differs: after b/z
    gets <5, 5>, b = .15 / 3 and a = .10 / 2 are both 1/20, a tie that goes to the allocation count
    (a: 1, b: 2, one per ``allocated()`` below it), so a comes first; upstream's ``double`` has
    0.15 / 3 = 0.049999999999999996 < 0.05 = 0.1 / 2 and puts b first.  The mechanism compares exactly."""
    assert 15 / 100 / 3 < 10 / 100 / 2 and F(15, 100) / 3 == F(10, 100) / 2
    for num in (float, F):
        s = TreeSorter(100, 100, num)
        s.update_weight("b", 3), s.update_weight("a", 2)
        _client(s, "a/x"), _client(s, "b/y")
        assert s.sort() == ["a/x", "b/y"]  # 0 / 2 = 0 / 3, counts 0: by path
        s.allocated("a/x", 10, 10)
        s.allocated("b/y", 10, 10)
        assert s.sort() == ["b/y", "a/x"]  # a = .10 / 2 = .05, b = .10 / 3 = .033
        _client(s, "b/z", 5, 5)
        if num is float:
            assert s.sort() == ["b/z", "b/y", "a/x"]  # upstream: b = .15 / 3 "<" .05 in double
        else:
            assert s.sort() == ["a/x", "b/z", "b/y"]  # exact tie 1/20: a's count 1 < b's 2
        _client(s, "b", 4, 4)
        # b = .19 / 3 = .063 > a = .05; inside b: b/. .04 (weight 1, not 3) < b/z .05 < b/y .10
        assert s.sort() == ["a/x", "b", "b/z", "b/y"]
        _client(s, "a/zz", 2, 2)
        assert s.sort() == ["a/zz", "a/x", "b", "b/z", "b/y"]  # a = .12 / 2 = .06 < b


def test_sort_tree_sums_subtrees_and_lists_preorder():
    """Inner allocations and counts are the subtree's sums; a client with child clients is listed at its
    virtual leaf's place; inactive clients are not listed but count; bad paths are refused."""
    t = (F(10), F(10))
    # c/d holds 3 (c = 3/10), e = 2/10: e first; within c: c/. (client c) 0 vs c/d 3/10
    assert sort_tree([("c", (0, 0), 0), ("c/d", (3, 3), 1), ("e", (2, 2), 1)], t) == ["e", "c", "c/d"]
    assert sort_tree([("c", (0, 0), 0), ("c/d", (3, 3), 1), ("e", (2, 2), 1)], t, inactive={"c/d"}) == ["e", "c"]
    # equal shares 2/10: counts c = 1 + 1 (two allocations below) > e = 1 -> e first
    assert sort_tree([("c/d", (1, 1), 1), ("c/f", (1, 1), 1), ("e", (2, 2), 1)], t) == ["e", "c/d", "c/f"]
    assert sort_tree([("c/d", (1, 1), 1), ("c/f", (1, 1), 1), ("e", (2, 2), 1)], t, counts={"c": 1}) == [
        "c/d", "c/f", "e"]  # count 1 = 1: by path
    for bad in ("", "a//b", "/a", "a/"):
        with pytest.raises(ValueError):
            sort_tree([(bad, (0, 0), 0)], t)
    with pytest.raises(ValueError):
        sort_tree([("a", (0, 0), 0), ("a", (0, 0), 0)], t)


# ---------------------------------------------------------------------- the mechanism on queue trees
def _tree_env(capacity, queues, users):
    return parse_environment({"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [capacity]}],
                              "queues": queues, "users": users})


def test_mechanism_on_a_tree_roles_and_frameworks():
    """cpu 12; queues a (weight 1), b (weight 2), b/c; u1 in a, u2 and u3 directly in b, u4 in b/c; every
    task <1>.  Roles: a = {u1}, b = {u2, u3} (the virtual leaf b/., weight 1), b/c = {u4}.  Shares x 12:
    A = t1, B = (t2 + t3 + t4) / 2, and inside b: D (b/.) = t2 + t3, C (b/c) = t4.
       1. A = B = 0, counts 0: path a < b -> u1               2. B 0 < A 1; D = C = 0, "b/." < "b/c"; u2 < u3 -> u2
       3. B .5 < 1; C 0 < D 1 -> u4                           4. A = B = 1, counts a 1 < b 2 -> u1
       5. B 1 < 2; D = C = 1, counts 1 = 1, "b/." -> u3 (0 tasks < u2's 1)
       6. B 1.5 < 2; C 1 < D 2 -> u4                          7. A = B = 2, counts 2 < 4 -> u1
       8. B 2 < 3; D = C = 2, counts 2 = 2 -> b/.: u2 = u3 = 1 task, counts 1 = 1, name -> u2
       9. B 2.5 < 3; C 2 < D 3 -> u4                          10. A = B = 3, counts 3 < 6 -> u1
      11. B 3 < 4; D = C = 3 -> b/.: u3 1 < u2 2 -> u3         12. B 3.5 < 4; C 3 < D 4 -> u4; cpu used up.
    u1 4, u2 2, u3 2, u4 4: b's 8 tasks split half to its own users (one client, b/.), half to b/c.  Users
    read as individual children of b (b/u2, b/u3 beside b/c) would split them in three instead."""
    env = _tree_env(12, [{"name": "a"}, {"name": "b", "weight": 2}, {"name": "b/c"}],
                    [{"name": "u1", "demand": [1], "queue": "a"}, {"name": "u2", "demand": [1], "queue": "b"},
                     {"name": "u3", "demand": [1], "queue": "b"}, {"name": "u4", "demand": [1], "queue": "b/c"}])
    a = mechanisms.allocate("mesos-drf", env)
    assert a.exact and a.totals() == (4, 2, 2, 4) and a.info["steps"] == 12
    # the order after step 4 (t = 2, 1, 0, 1), as at step 5: b (1 < 2) first; inside it b/. (tie 1 = 1,
    # counts 1 = 1, path) with u3 before u2 (0 < 1 tasks), then b/c's u4, then a's u1
    assert user_order(env, [2, 1, 0, 1], [[F(2)], [F(1)], [F(0)], [F(1)]]) == ["u3", "u2", "u4", "u1"]


def test_mechanism_root_users_are_the_default_role():
    """cpu 6; u0 and u9 at the root (role "*"), u1 in queue a; every task <1>.  "*" < "a" in ties.
       1. "*" = a = 0, counts 0, "*" < "a" -> "*": u0 (name)   2. a 0 < 1 -> u1
       3. tie 1 = 1, counts 1 = 1 -> "*": u9 (0 tasks)          4. a 1 < 2 -> u1
       5. tie 2 = 2, counts 2 = 2 -> "*": u0, u9 tie on 1 task -> u0      6. a -> u1.
    u0 2, u9 1, u1 3 (the root's users share one role; as separate roles they would get 2, 2, 2)."""
    env = _tree_env(6, [{"name": "a"}], [{"name": "u0", "demand": [1]}, {"name": "u9", "demand": [1]},
                                         {"name": "u1", "demand": [1], "queue": "a"}])
    assert mechanisms.allocate("mesos-drf", env).totals() == (2, 1, 3)
    assert DEFAULT_ROLE == "*"


def test_mechanism_user_weights_inside_a_role_and_feasibility():
    """Two servers s1 <cpu 2, mem 4>, s2 <cpu 2, mem 4> (pooled 4, 8); queue q (weight 5) with u1 (weight 2,
    <1, 1>) and u2 (<1, 2>); queue p with u3 (<1, 1>, bound 1).  The roles q and p compare their shares
    divided by their queue weights; inside q, u1's share is divided by its user weight 2.
       1. p = q = 0, counts 0: "p" < "q" -> u3 (s1)        p = max(1/4, 1/8) = 1/4; u3's bound reached
       2. q 0 -> inside q: u1 = u2 = 0, names -> u1 (s1)   u1 = 1/4 / 2 = 1/8
       3. u2 0 < u1 1/8 -> u2 (s2, s1 has cpu 0 left)      u2 = max(1/4, 2/8) = 1/4
       4. u1 1/8 < 1/4 -> u1 (s2)                          u1 = 2/4 / 2 = 1/4; s2 cpu 0 left: stop.
    u1 x = (1, 1), u2 (0, 1), u3 (1, 0)."""
    env = parse_environment({"resources": ["cpu", "mem"],
                             "servers": [{"name": "s1", "capacity": [2, 4]}, {"name": "s2", "capacity": [2, 4]}],
                             "queues": [{"name": "q", "weight": 5}, {"name": "p"}],
                             "users": [{"name": "u1", "demand": [1, 1], "weight": 2, "queue": "q"},
                                       {"name": "u2", "demand": [1, 2], "queue": "q"},
                                       {"name": "u3", "demand": [1, 1], "tasks": 1, "queue": "p"}]})
    a = mechanisms.allocate("mesos-drf", env)
    assert a.x == ((1, 1), (0, 1), (1, 0)) and feasibility_violations(env, a.x) == []


def test_a_tree_without_users_in_queues_is_the_flat_order():
    """Every user at the root is one role "*" ordered by (share / weight, tasks, name): the flat order."""
    flat = env_of(["cpu"], [[6]], [{"demand": [1]}, {"demand": [2]}])
    tree = parse_environment({**flat.to_dict(), "queues": [{"name": "idle", "weight": 3}]})
    assert mechanisms.allocate("mesos-drf", tree).x == mechanisms.allocate("mesos-drf", flat).x == ((2,), (2,))


def test_cli_allocate_on_a_queue_tree(tmp_path):
    """``python -m verifier allocate mesos-drf FILE`` on an instance with queues (docs/model.md, Queue trees)."""
    inst = {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [8, 16]}],
            "queues": [{"name": "eng", "weight": 2}, {"name": "eng/dev", "weight": 50, "guarantee": [4, 8]},
                       {"name": "ops"}],
            "users": [{"name": "alice", "demand": [1, 2], "queue": "eng/dev"},
                      {"name": "bob", "demand": [1, 1], "queue": "ops"}]}
    # alice <1, 2> has the dominant share 1/8 per task (cpu 1/8 = mem 2/16), eng's is t_a / 8 / 2 (eng/dev is
    # eng's only child: its weight 50 changes no order); bob's (ops) t_b / 8.  The guarantee is not read.
    #   1. 0 = 0, counts 0, "eng" < "ops" -> alice (eng 1/16)   2. ops 0 -> bob (2/16)
    #   3. eng 1/16 -> alice (2/16)      4. tie 2/16, counts eng 2 > ops 1 -> bob (4/16)
    #   5, 6. eng 2/16, 3/16 < 4/16 -> alice, alice (4/16)      7. tie 4/16, counts 4 > 2 -> bob (6/16)
    #   8. eng 4/16 -> alice: cpu 5 + 3 = 8 used, stop.  alice 5, bob 3.
    f = tmp_path / "tree.json"
    f.write_text(json.dumps(inst))
    out = run_cli("allocate", "mesos-drf", str(f), "--exact", "--format", "json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["users"] == ["alice", "bob"] and res["totals"] == ["5", "3"] and res["exact"] is True


def _reference(env):
    """The mechanism from its definition: at every step the whole order from scratch (``sort_tree`` on the
    roles, ``sort_clients`` inside each), then the first user that can take a task."""
    from mechverify.policies import progressive_filling

    role = [DEFAULT_ROLE if q is None else env.queues[q] for q in env.user_queue]
    weights = dict(zip(env.queues, env.queue_weight))

    def key(st, j):
        roles = sorted(set(role))
        members = {p: [i for i in range(env.n_users) if role[i] == p] for p in roles}
        clients = [(p, [sum(st.allocated[i][r] for i in members[p]) for r in range(env.n_resources)],
                    sum(st.tasks[i] for i in members[p])) for p in roles]
        order = []
        for p in sort_tree(clients, st.totals, weights):
            names = sort_clients([(env.users[i], st.allocated[i], st.tasks[i], env.weight[i]) for i in members[p]],
                                 st.totals)
            order += [env.users.index(n) for n in names]
        return order.index(j)

    return progressive_filling(env, key, local=False, name="reference")


def test_incremental_order_matches_the_order_from_scratch():
    """200 random trees (inner queues with users of their own, users at the root, queue and user weights,
    bounds, placement, two servers): the mechanism (incremental, like upstream's ``allocated()``) places
    every task as the order recomputed from scratch does."""
    import random

    rng = random.Random(25)
    pool = ["a", "b", "a/c", "a/d", "b/e", "a/c/f"]
    for _ in range(200):
        names = ["a", "b"] + [q for q in pool[2:] if rng.random() < 0.6]
        names = [q for q in names if all("/".join(q.split("/")[:i]) in names for i in range(1, q.count("/") + 1))]
        queues = [{"name": q, "weight": rng.randint(1, 4)} for q in names]
        users = []
        for j in range(rng.randint(2, 6)):
            u = {"name": f"u{j}", "demand": [rng.randint(0, 3), rng.randint(1, 3)], "weight": rng.randint(1, 3)}
            q = rng.choice(names + [None])
            if q is not None:
                u["queue"] = q
            if rng.random() < 0.3:
                u["tasks"] = rng.randint(0, 4)
            if rng.random() < 0.2:
                u["eligible"] = [rng.choice(["s1", "s2"])]
            users.append(u)
        env = parse_environment({"resources": ["cpu", "mem"],
                                 "servers": [{"name": "s1", "capacity": [rng.randint(2, 9), rng.randint(2, 9)]},
                                             {"name": "s2", "capacity": [rng.randint(2, 9), rng.randint(2, 9)]}],
                                 "queues": queues, "users": users})
        assert mechanisms.allocate("mesos-drf", env).x == _reference(env).x, env.to_dict()

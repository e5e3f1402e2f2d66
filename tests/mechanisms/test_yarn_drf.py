"""``yarn-drf`` and ``yarn-drf@YARN-11482`` (src/mechanisms/ports/yarn/drf.py, drf_policy.py): upstream's comparator tests replayed on
hand-built states, the historic bug's asymmetry, the NaN cycle of today's comparator, the JDK's TreeSet and sort
reproduced, the mechanism end to end, and hostile inputs.

Upstream: apache/hadoop @ 9193ed22dd9eb00f82573a9ba763db72ee65aad0,
hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/hadoop-yarn-server-resourcemanager/src/test/java/org/apache/
hadoop/yarn/server/resourcemanager/scheduler/fair/policies/TestDominantResourceFairnessPolicy.java
("comparator.compare(sched1, sched2) < 0 means that sched1 should get a container before sched2").
Its ``setup`` adds a third resource type "test" that the cluster does not have (capacity 0), and each test
``testX`` has a twin ``testX2`` that resets the types to memory and vcores; we replay every comparison both
ways: with two resources, and with a third resource of capacity 0 (its usage ratio is 0/0 = NaN).
"""
from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.registry import SettingError
from mechanisms.ports.java_go import NAN, treeset_order
from mechanisms.ports.yarn.drf_policy import (Schedulable, cluster_ratios, compare_ratios, compare_schedulables,
                                              min_share_ratios, sort_ratios)
from mechverify.allocation import Allocation, feasibility_violations
from mechverify.instances import load_environment, parse_environment
from mechverify.numbers import INF, InstanceError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "yarn-drf.json")
#: the registered order facets: the fixed policy, and the comparator before YARN-11482's fix
YARN_DRF = mechanisms.get("yarn-drf").order
YARN_DRF_11482 = mechanisms.get("yarn-drf@YARN-11482").order
TEST_COMMIT = "9193ed22dd9eb00f82573a9ba763db72ee65aad0"


# ---------------------------------------------------------------------- hand-built states
def pair_state(cluster, s1, s2, third=False):
    """Two top-level queues ``s1`` and ``s2``, each with one app whose usage is the schedulable's usage; the
    schedulable's min share is the queue's guarantee, its weight the queue's weight.  ``s = (usage, weight,
    min share)``.  ``third``: a third resource "test" of capacity 0 that nobody uses or is guaranteed (upstream's
    ``setup``).  Returns the state (an exact Allocation: one task each, of the usage as demand)."""
    resources = ["memory", "vcores"] + (["test"] if third else [])
    pad = [0] if third else []
    queues, users = [], []
    for k, (usage, weight, minimum) in enumerate((s1, s2)):
        q = {"name": f"s{k + 1}", "weight": weight}
        if any(minimum):
            q["guarantee"] = list(minimum) + pad
        queues.append(q)
        users.append({"name": f"app{k + 1}", "demand": list(usage) + pad, "queue": f"s{k + 1}", "tasks": 1})
    env = parse_environment({"resources": resources, "servers": [{"name": "cluster",
                                                                  "capacity": list(cluster) + pad}],
                             "queues": queues, "users": users})
    return Allocation(env, ((F(1),), (F(1),)), "state", True)


def upstream_compare(cluster, s1, s2, spec=YARN_DRF):
    """``c.compare(s1, s2)`` on the hand-built state, with two resources and with the zero third one; both
    must agree (upstream runs each comparison both ways)."""
    two = spec.compare(pair_state(cluster, s1, s2), 0, 1)
    three = spec.compare(pair_state(cluster, s1, s2, third=True), 0, 1)
    assert (two > 0) - (two < 0) == (three > 0) - (three < 0)
    return two


def sched(usage, weight=1, minimum=(0, 0)):
    return (usage, weight, minimum)


# ---------------------------------------------------------------------- upstream's comparisons
def test_same_dominant_resource():
    """testSameDominantResource / testSameDominantResource2 @ 9193ed22: cluster <8000, 4>, <1000, 1> before
    <2000, 1> (both memory-dominant: 1/8 < 1/4)."""
    assert upstream_compare((8000, 4), sched((1000, 1)), sched((2000, 1))) < 0


def test_different_dominant_resource():
    """testDifferentDominantResource / ...2 @ 9193ed22: cluster <8000, 8>, <4000, 3> before <2000, 5> (1/2 <
    5/8: the dominant shares are of different resources)."""
    assert upstream_compare((8000, 8), sched((4000, 3)), sched((2000, 5))) < 0


def test_one_is_needy():
    """testOneIsNeedy / ...2 @ 9193ed22: cluster <8000, 8>, <2000, 5> with min share <0, 6> (needy: its
    dominant vcores 5 < 6) before <4000, 3> (not needy) although its dominant share is larger."""
    assert upstream_compare((8000, 8), sched((2000, 5), 1, (0, 6)), sched((4000, 3))) < 0


def test_both_are_needy():
    """testBothAreNeedy / ...2 @ 9193ed22: cluster <8000, 100>: <2000, 5> before <4000, 3> (no min shares: 1/4 <
    1/2); then with min shares <3000, 6> and <5000, 4> both are needy (memory-dominant, 2000 < 3000 and 4000 <
    5000) and the min-share ratios decide: 2/3 < 4/5."""
    assert upstream_compare((8000, 100), sched((2000, 5)), sched((4000, 3))) < 0
    assert upstream_compare((8000, 100), sched((2000, 5), 1, (3000, 6)), sched((4000, 3), 1, (5000, 4))) < 0


def test_even_weights_same_dominant_resource():
    """testEvenWeightsSameDominantResource / ...2 @ 9193ed22: cluster <8000, 8>; weight 2: <3000, 1> (3/16)
    before <2000, 1> (1/4); weight 2: <1000, 3> (3/16) before <1000, 2> (1/4)."""
    assert upstream_compare((8000, 8), sched((3000, 1), 2), sched((2000, 1))) < 0
    assert upstream_compare((8000, 8), sched((1000, 3), 2), sched((1000, 2))) < 0


def test_even_weights_different_dominant_resource():
    """testEvenWeightsDifferentDominantResource / ...2 @ 9193ed22: cluster <8000, 8>; weight 2: <1000, 3>
    (3/16) before <2000, 1> (1/4); weight 2: <3000, 1> (3/16) before <1000, 2> (1/4)."""
    assert upstream_compare((8000, 8), sched((1000, 3), 2), sched((2000, 1))) < 0
    assert upstream_compare((8000, 8), sched((3000, 1), 2), sched((1000, 2))) < 0


def test_compare_schedulables_with_cluster_resource_changes():
    """testCompareSchedulablesWithClusterResourceChanges @ 9193ed22: <2000, 1> against <1000, 2>: cluster
    <4000, 5> gives shares [1/2, 1/5] and [1/4, 2/5], first greater (1/2 > 2/5); cluster <8000, 6> gives [1/4,
    1/6] and [1/8, 1/3], first smaller (1/4 < 1/3)."""
    assert upstream_compare((4000, 5), sched((2000, 1)), sched((1000, 2))) > 0
    assert upstream_compare((8000, 6), sched((2000, 1)), sched((1000, 2))) < 0


def test_calculate_cluster_and_fair_ratios():
    """testCalculateClusterAndFairRatios (three resources) and ...2 (two) @ 9193ed22: used <10, 5, 2> of
    <100, 10, 5>: ratios 1/10, 1/2, 2/5 and vcores dominant; two resources: 1/10, 1/2, vcores."""
    dominant, usage, fair = cluster_ratios((F(10), F(5), F(2)), (F(100), F(10), F(5)), F(1))
    assert (dominant, usage, fair) == (1, [F(1, 10), F(1, 2), F(2, 5)], [F(1, 10), F(1, 2), F(2, 5)])
    assert cluster_ratios((F(10), F(5)), (F(100), F(10)), F(1))[:2] == (1, [F(1, 10), F(1, 2)])
    # the fair ratio is the usage ratio over the weight (the method's documentation: weights 2 give 0.05, 0.25)
    assert cluster_ratios((F(10), F(5)), (F(100), F(10)), F(2))[2] == [F(1, 20), F(1, 4)]


def test_calculate_min_share_ratios():
    """testCalculateMinShareRatios (three resources) and ...2 @ 9193ed22: used <10, 5, 2> over min shares
    <5, 10, 0>: 2, 1/2 and +inf (2 / 0)."""
    assert min_share_ratios((F(10), F(5), F(2)), (F(5), F(10), F(0))) == [F(2), F(1, 2), INF]
    assert min_share_ratios((F(10), F(5)), (F(5), F(10))) == [F(2), F(1, 2)]


def test_sort_shares():
    """testSortShares @ 9193ed22: usage ratios [0.3, 0.2, 0.4] sort to [0.4, 0.3, 0.2] and [0.2, 0.3, 0.25] to
    [0.3, 0.25, 0.2] (the rows move with their usage ratio)."""
    assert sort_ratios([F(3, 10), F(2, 10), F(4, 10)]) == [2, 0, 1]
    assert sort_ratios([F(2, 10), F(3, 10), F(25, 100)]) == [1, 2, 0]


def test_compare_shares():
    """testCompareShares @ 9193ed22: compareRatios on three sorted arrays, column 0 (usage), 1 (fair share) and 2
    (min share); every assertion of the test."""
    d = F
    r1 = [[d(4, 10), d(1, 10), d(2)], [d(3, 10), d(2), d(1, 10)], [d(2, 10), d(1), d(9)]]
    r2 = [[d(3, 10), d(2), d(1)], [d(2, 10), d(1, 10), d(1, 2)], [d(2, 10), d(1), d(2)]]
    r3 = [[d(3, 10), d(2), d(1)], [d(2, 10), d(1, 10), d(2)], [d(1, 10), d(2), d(1)]]

    def c(a, b, k):
        return compare_ratios([row[k] for row in a], [row[k] for row in b])

    expected = {0: (1, -1, 1), 1: (-1, 1, -1), 2: (1, -1, -1)}  # (r1 vs r2, r2 vs r1, r2 vs r3)
    for k, (a, b, e) in expected.items():
        assert (c(r1, r2, k), c(r2, r1, k), c(r2, r3, k)) == (a, b, e)
        assert c(r1, r1, k) == c(r2, r2, k) == c(r3, r3, k) == 0


# ---------------------------------------------------------------------- the historic bug: YARN-11482
def test_yarn_11482_is_not_antisymmetric():
    """Before the fix (DominantResourceFairnessPolicy.java @ ee91492f, Comparator2: ``s2Needy =
    resourceInfo1[dominant2] < minShareInfo2[dominant2]``) the second schedulable's neediness is read off the
    first's usage.  Hand-derived on <8, 8>: queue a (weight 4) holds <5, 5>; queue b (weight 1, min share <4,
    4>) holds <3, 3>, so b IS needy (memory-dominant on the tie, 3 < 4).
    compare(a, b): b looks non-needy (a's 5 >= 4), fair ratios 5/32 < 3/8: a first (-1).
    compare(b, a): b needy, a not: b first (-1).  Both -1: not opposite.  The fixed comparator: +1 and -1."""
    state = pair_state((8, 8), sched((5, 5), 4), sched((3, 3), 1, (4, 4)))
    assert YARN_DRF_11482.compare(state, 0, 1) < 0 and YARN_DRF_11482.compare(state, 1, 0) < 0
    assert YARN_DRF.compare(state, 0, 1) > 0 and YARN_DRF.compare(state, 1, 0) < 0
    # the bug was in Comparator2 only: with three resources upstream uses ComparatorN, which was right
    three = pair_state((8, 8), sched((5, 5), 4), sched((3, 3), 1, (4, 4)), third=True)
    assert YARN_DRF_11482.compare(three, 0, 1) > 0 and YARN_DRF_11482.compare(three, 1, 0) < 0


def test_fixed_comparator_is_antisymmetric_where_the_variant_is_not():
    """On random two-queue states with two resources (guarantees, weights, usages), the fixed comparator always
    gives opposite signs; the variant does not (it is found)."""
    rng = random.Random(11482)
    broken = 0
    for _ in range(400):
        s1 = sched((rng.randint(0, 8), rng.randint(0, 8)), rng.randint(1, 4),
                   (rng.randint(0, 8), rng.randint(0, 8)) if rng.random() < 0.5 else (0, 0))
        s2 = sched((rng.randint(0, 8), rng.randint(0, 8)), rng.randint(1, 4),
                   (rng.randint(0, 8), rng.randint(0, 8)) if rng.random() < 0.5 else (0, 0))
        state = pair_state((8, 8), s1, s2)
        a, b = YARN_DRF.compare(state, 0, 1), YARN_DRF.compare(state, 1, 0)
        assert (a > 0) - (a < 0) == -((b > 0) - (b < 0)) != 0
        a, b = YARN_DRF_11482.compare(state, 0, 1), YARN_DRF_11482.compare(state, 1, 0)
        broken += (a > 0) - (a < 0) != -((b > 0) - (b < 0))
    assert broken > 0


def test_yarn_11482_starves_a_sibling_end_to_end():
    """One container per round, hand-derived on one pool <12, 12>: queue "batch" (min share <4, 4>, declared
    first) and queue "adhoc" (weight 4), one app each of <1, 1>.  The root's TreeSet adds batch, then adhoc, so
    ``compare(adhoc, batch)`` places them.  Fixed: batch is needy (memory-dominant on the tie) until it holds 4,
    then adhoc's fair ratio (k/12)/4 stays below batch's 4/12 for every k <= 8: batch 4, adhoc 8.  Before the
    fix batch's neediness is read off adhoc's usage (0 < 4 for ever): batch is served every round and takes all
    12, adhoc none."""
    env = parse_environment({"resources": ["memory", "vcores"], "servers": [{"name": "pool", "capacity": [12, 12]}],
                             "queues": [{"name": "batch", "guarantee": [4, 4]}, {"name": "adhoc", "weight": 4}],
                             "users": [{"name": "b", "demand": [1, 1], "queue": "batch"},
                                       {"name": "a", "demand": [1, 1], "queue": "adhoc"}]})
    assert mechanisms.allocate("yarn-drf", env).totals() == (4, 8)
    assert mechanisms.allocate("yarn-drf@YARN-11482", env).totals() == (12, 0)


# ---------------------------------------------------------------------- transitivity: the NaN of 0 / 0
def three_queues(resources, capacity, rows):
    """Top-level queues ``rows = [(name, usage, guarantee)]``, one app each (one task of ``usage``)."""
    env = parse_environment({
        "resources": resources, "servers": [{"name": "pool", "capacity": capacity}],
        "queues": [{"name": n, "guarantee": g} for n, _, g in rows],
        "users": [{"name": f"app-{n}", "demand": u, "queue": n, "tasks": 1} for n, u, _ in rows]})
    return Allocation(env, tuple((F(1),) for _ in rows), "state", True)


def test_todays_comparator_is_not_transitive_with_0_over_0():
    """Upstream's comparator as it is today (YARN-11482 fixed) is not a strict weak order once a min-share ratio
    is 0 / 0 = NaN: both needy, that position compares as a tie and the NAME decides.  Hand-derived on <8, 8>,
    queues named so that b sorts between a and c:
      a: usage <1, 1>, min <2, 2>: needy (memory on the tie), min-share ratios (1/2, 1/2);
      b: usage <1, 0>, min <2, 0>: needy, ratios (1/2, 0/0 = NaN);
      c: usage <1, 1>, min <2, 4>: needy, ratios (1/2, 1/4).
    c before a (1/4 < 1/2 at the second position); a before b (tie, NaN, then root.a < root.b); b before c
    (tie, NaN, root.b < root.c): a cycle c < a < b < c."""
    state = three_queues(["memory", "vcores"], [8, 8], [("a", [1, 1], [2, 2]), ("b", [1, 0], [2, 0]),
                                                        ("c", [1, 1], [2, 4])])
    a, b, c = 0, 1, 2
    assert YARN_DRF.compare(state, c, a) < 0 and YARN_DRF.compare(state, a, b) < 0
    assert YARN_DRF.compare(state, b, c) < 0  # ... and so c < a < b < c


def test_todays_comparator_cycle_on_a_gpu_cluster():
    """The same cycle with three resource types (upstream's ComparatorN) and containers that all hold memory
    and vcores: a GPU cluster <8, 8, 8>; queues a and c use a GPU and have GPU min shares 2 and 4, queue b uses
    none and is guaranteed none (0 / 0 at the last sorted position).  Memory and vcores tie for all three (1/2,
    1/2); the GPU position orders c before a and ties b with both, so the names order a before b before c."""
    state = three_queues(["memory", "vcores", "gpu"], [8, 8, 8],
                         [("a", [1, 1, 1], [2, 2, 2]), ("b", [1, 1, 0], [2, 2, 0]), ("c", [1, 1, 1], [2, 2, 4])])
    assert YARN_DRF.compare(state, 2, 0) < 0 and YARN_DRF.compare(state, 0, 1) < 0
    assert YARN_DRF.compare(state, 1, 2) < 0


def _is_strict_weak(spec, state):
    n = state.env.n_users
    c = {(i, j): spec.compare(state, i, j) for i in range(n) for j in range(n)}
    sign = {k: (v > 0) - (v < 0) for k, v in c.items()}
    for i in range(n):
        if sign[i, i]:
            return False
        for j in range(n):
            if sign[i, j] != -sign[j, i]:
                return False
            for k in range(n):
                if sign[i, j] < 0 and sign[j, k] < 0 and not sign[i, k] < 0:
                    return False
                if sign[i, j] == 0 and sign[j, k] == 0 and sign[i, k] != 0:
                    return False
    return True


def test_todays_comparator_is_a_strict_weak_order_without_0_over_0():
    """Where no ratio is 0 / 0 (positive capacities, and every guarantee absent or positive on every resource)
    the comparator is a strict weak order: random trees of 2-4 queues and 3-5 apps, random states."""
    rng = random.Random(26)
    for _ in range(150):
        nq = rng.randint(2, 4)
        queues = []
        for q in range(nq):
            name = f"q{q}" if q < 2 or rng.random() < 0.5 else f"q{rng.randint(0, 1)}/s{q}"
            if name in [x["name"] for x in queues]:
                name = f"q{q}"
            entry = {"name": name, "weight": rng.randint(1, 3)}
            if rng.random() < 0.6:
                entry["guarantee"] = [rng.randint(1, 6), rng.randint(1, 6)]
            queues.append(entry)
        users = [{"name": f"u{j}", "demand": [rng.randint(0, 3), rng.randint(0, 3)],
                  "queue": rng.choice([x["name"] for x in queues])} for j in range(rng.randint(3, 5))]
        for u in users:
            if not any(u["demand"]):
                u["demand"] = [1, 1]
        env = parse_environment({"resources": ["memory", "vcores"], "servers": [{"name": "p", "capacity": [12, 12]}],
                                 "queues": queues, "users": users})
        state = Allocation(env, tuple((F(rng.randint(0, 3)),) for _ in users), "state", True)
        assert _is_strict_weak(YARN_DRF, state), env.to_json()


# ---------------------------------------------------------------------- the JDK's TreeSet and Arrays.sort
_JAVA = r"""
import java.util.*;
public class Probe {
  public static void main(String[] args) {
    Scanner in = new Scanner(System.in);
    while (in.hasNext()) {
      String kind = in.next();
      int n = in.nextInt();
      StringBuilder sb = new StringBuilder();
      if (kind.equals("T")) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) order[i] = in.nextInt();
        final int[][] t = new int[n][n];
        for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) t[i][j] = in.nextInt();
        TreeSet<Integer> s = new TreeSet<>((x, y) -> t[x][y]);
        for (int v : order) s.add(v);
        for (int v : s) sb.append(v).append(' ');
      } else {
        float[][] rows = new float[n][2];
        for (int i = 0; i < n; i++) {
          String w = in.next();
          rows[i][0] = w.equals("nan") ? Float.NaN : Float.parseFloat(w);
          rows[i][1] = i;
        }
        Arrays.sort(rows, (float[] o1, float[] o2) -> (int) Math.signum(o2[0] - o1[0]));
        for (float[] r : rows) sb.append((int) r[1]).append(' ');
      }
      System.out.println(sb.toString().trim());
    }
  }
}
"""


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="needs a JDK")
def test_treeset_and_ratio_sort_match_the_jdk(tmp_path):
    """:func:`treeset_order` is ``java.util.TreeSet``'s order and :func:`sort_ratios` is ``Arrays.sort`` with
    upstream's row comparator, also for comparators that are not strict weak orders (random tables, some
    cyclic, some with ties that drop an element) and for NaN usage ratios: checked against the JDK."""
    (tmp_path / "Probe.java").write_text(_JAVA)
    subprocess.run(["javac", "Probe.java"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    rng = random.Random(2026)
    lines, expect = [], []
    for _ in range(300):
        n = rng.randint(1, 14)
        order = list(range(n))
        rng.shuffle(order)
        tab = [[0 if i == j else (rng.choice((-1, 0, 1)) if rng.random() < 0.4 else (i > j) - (i < j))
                for j in range(n)] for i in range(n)]
        lines.append(f"T {n} {' '.join(map(str, order))} {' '.join(str(v) for row in tab for v in row)}")
        expect.append(treeset_order(order, lambda a, b, tab=tab: tab[a][b]))
    for _ in range(300):
        n = rng.randint(1, 12)
        vals = [NAN if rng.random() < 0.3 else F(rng.randint(0, 4), 4) for _ in range(n)]
        lines.append(f"S {n} " + " ".join("nan" if isinstance(v, float) else str(float(v)) for v in vals))
        expect.append(sort_ratios(vals))
    out = subprocess.run(["java", "-cp", str(tmp_path), "Probe"], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    assert [[int(v) for v in row.split()] for row in out] == expect


# ---------------------------------------------------------------------- the mechanism end to end
def test_example_by_hand():
    """examples/yarn-drf.json, pool <6, 6>; queue a (min share <2, 2>) holds x <1, 2>; queue b (weight 2) holds
    y <2, 1> and z <1, 1>.  One container per round:
    1. a <0, 0> is needy (memory-dominant on the tie, 0 < 2), b is not: a first; x takes one -> a <1, 2>.
    2. a is vcores-dominant, 2 >= 2: not needy.  Sorted fair ratios a (1/3, 1/6), b (0, 0): b; in b, y and z tie
       at 0 and y's start time is earlier: y -> b <2, 1>.
    3. b (1/3, 1/6) / 2 = (1/6, 1/12) < a's 1/3: b; z (0) before y (1/3): z -> b <3, 2>.
    4. b (1/4, 1/6) < a (1/3): b; z (1/6) before y (1/3): z -> b <4, 3>; the pool has <1, 1> left.
    5. a (1/3, 1/6) and b (4/6, 3/6) / 2 = (1/3, 1/4) tie first, a's 1/6 < 1/4: a first; x needs 2 vcores, only 1
       left: a gives nothing; b: y (1/3, 1/6) before z (1/3, 1/3), y needs 2 memory, 1 left; z fits -> z.
    6. <0, 0> left: nothing fits.  x 1, y 1, z 3."""
    env = load_environment(EXAMPLE)
    alloc = mechanisms.allocate("yarn-drf", env)
    assert alloc.totals() == (1, 1, 3) and alloc.exact and alloc.info["steps"] == 5
    assert not feasibility_violations(env, alloc.x)
    # the order facet on the final state: a <1, 2> and b <5, 4> / 2 = (5/12, 1/3): a first, then y before z in b
    assert [env.users[j] for j in YARN_DRF.order(alloc)] == ["x", "y", "z"]
    assert YARN_DRF.share(alloc, 2) == F(1, 2) and YARN_DRF.queue_share(alloc, 1) == F(5, 12) \
        and YARN_DRF.queue_share(alloc, 0) == F(1, 3)
    # before the YARN-11482 fix a stays "needy" while b holds less than 2 of a's dominant resource (vcores):
    # x takes three containers, then no vcores are left for y or z
    assert mechanisms.allocate("yarn-drf@YARN-11482", env).totals() == (3, 0, 0)


def test_command_line_allocate():
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "yarn-drf", EXAMPLE, "--exact"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[2:]}
    assert rows == {"x": ["1", "1"], "y": ["1", "1"], "z": ["3", "3"]}


def test_registered_with_order_and_setting():
    for name in ("yarn-drf", "yarn-drf@YARN-11482"):
        m = mechanisms.get(name)
        assert m.order is not None and m.setting.ordered and m.setting.hierarchy and not m.setting.divisible
        assert "ee91492f16528292c4ad173dd018807a63fe6106" in m.source
    assert "YARN-11482" in mechanisms.get("yarn-drf@YARN-11482").source


def test_flat_instance_users_are_apps_at_the_root():
    """No queues: every user is an app under the root; three apps of <1, 1> on <3, 3>: one task each, in
    start-time (declaration) order on ties."""
    env = parse_environment({"resources": ["m", "c"], "servers": [{"name": "p", "capacity": [3, 3]}],
                             "users": [{"name": n, "demand": [1, 1]} for n in ("u", "v", "w")]})
    assert mechanisms.allocate("yarn-drf", env).totals() == (1, 1, 1)
    empty = Allocation(env, ((F(0),),) * 3, "state", True)
    assert YARN_DRF.order(empty) == [0, 1, 2]


# ---------------------------------------------------------------------- hostile inputs
def test_weight_zero_and_zero_min_share_follow_ieee():
    """Pure comparator, weight 0 (the instance format forbids it): usage > 0 gives +inf fair ratios, so the
    schedulable loses to any other (upstream's comment); usage 0 gives NaN, a tie, then the names."""
    cluster = (F(8), F(8))
    z = (F(0), F(0))
    heavy_w0 = Schedulable((F(1), F(1)), z, F(0), 0, "root.a")
    big = Schedulable((F(8), F(8)), z, F(1), 0, "root.b")
    assert compare_schedulables(heavy_w0, big, cluster) > 0 and compare_schedulables(big, heavy_w0, cluster) < 0
    idle_w0 = Schedulable(z, z, F(0), 0, "root.c")
    assert compare_schedulables(idle_w0, big, cluster) > 0  # NaN ties, "root.c" > "root.b"
    assert compare_schedulables(idle_w0, heavy_w0, cluster) > 0  # NaN vs inf: a tie too
    # min share 0 on a resource in use: +inf min-share ratio, a strict loss at that position
    assert min_share_ratios((F(1), F(0)), (F(0), F(0)))[0] == INF
    assert math.isnan(min_share_ratios((F(1), F(0)), (F(0), F(0)))[1])


def test_zero_capacities_give_a_defined_order_never_a_traceback():
    env = parse_environment({"resources": ["m", "c"], "servers": [{"name": "p", "capacity": [0, 0]}],
                             "queues": [{"name": "a", "guarantee": [1, 0]}, {"name": "b"}],
                             "users": [{"name": "u", "demand": [1, 1], "queue": "a"},
                                       {"name": "v", "demand": [1, 0], "queue": "b"},
                                       {"name": "w", "demand": [0, 1]}]})
    assert mechanisms.allocate("yarn-drf", env).totals() == (0, 0, 0)
    for x in (((F(0),),) * 3, ((F(2),), (F(1),), (F(3),)), ((F(-1),), (F(1, 2),), (F(0),))):
        state = Allocation(env, x, "state", True)
        order = YARN_DRF.order(state)
        assert sorted(order) == [0, 1, 2]
        for j in range(3):
            s = YARN_DRF.share(state, j)
            assert s == INF or isinstance(s, F)
        for i in range(3):
            for j in range(3):
                assert isinstance(YARN_DRF.compare(state, i, j), int)
    # a float NaN in a state: still an int, no traceback
    nan_state = Allocation(env, ((float("nan"),), (F(1),), (F(0),)), "state", True)
    assert isinstance(YARN_DRF.compare(nan_state, 0, 1), int)


def test_outside_the_setting_and_bad_weights_are_one_line():
    env = parse_environment({"resources": ["m"], "servers": [{"name": "p", "capacity": [2]},
                                                             {"name": "q", "capacity": [2]}],
                             "users": [{"name": "u", "demand": [1]}]})
    with pytest.raises(SettingError, match=r"^servers: yarn-drf is defined for one server"):
        mechanisms.allocate("yarn-drf", env)
    with pytest.raises(InstanceError, match=r"^queues\[0\]\.weight: must be > 0"):
        parse_environment({"resources": ["m"], "servers": [{"name": "p", "capacity": [2]}],
                           "queues": [{"name": "a", "weight": 0}], "users": [{"name": "u", "demand": [1]}]})


def test_ten_thousand_queues():
    """10^4 top-level queues with one app each: the order of a few pairs is computed (queue usages once per
    state); the mechanism on a hundred."""
    n = 10_000
    env = parse_environment({"resources": ["m", "c"], "servers": [{"name": "p", "capacity": [n, n]}],
                             "queues": [{"name": f"q{i:05d}"} for i in range(n)],
                             "users": [{"name": f"u{i:05d}", "demand": [1, 1], "queue": f"q{i:05d}"}
                                       for i in range(n)]})
    state = Allocation(env, tuple((F(i % 3),) for i in range(n)), "state", True)
    assert YARN_DRF.compare(state, 0, 1) < 0 and YARN_DRF.compare(state, 2, 3) > 0
    small = parse_environment({"resources": ["m", "c"], "servers": [{"name": "p", "capacity": [100, 100]}],
                               "queues": [{"name": f"q{i:03d}"} for i in range(100)],
                               "users": [{"name": f"u{i:03d}", "demand": [1, 1], "queue": f"q{i:03d}"}
                                         for i in range(100)]})
    assert mechanisms.allocate("yarn-drf", small).totals() == (1,) * 100

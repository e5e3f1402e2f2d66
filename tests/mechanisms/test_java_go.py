"""The Java/Go semantics the ports share (src/mechanisms/ports/java_go.py): hand-derived cases of the JDK's sort
and TreeSet with comparators that are not strict weak orders, IEEE division and NaN comparison on exact numbers,
Go's integer division -- and every function against the JDK itself when one is installed."""
from __future__ import annotations

import math
import random
import shutil
import subprocess
from fractions import Fraction as F
from functools import cmp_to_key

import pytest

from mechanisms.ports.java_go import (MIN_MERGE, NAN, double_compare, double_key, gt, go_int_div, ieee_div, isnan,
                                      java_sort, signum_diff, string_key, treeset_order)
from mechverify.numbers import INF


def table(pairs: dict):
    """A comparator from ``{(x, y): sign}`` (antisymmetric: ``(y, x)`` gets the opposite sign; 0 if absent)."""
    def cmp(x, y):
        if (x, y) in pairs:
            return pairs[(x, y)]
        return -pairs.get((y, x), 0)
    return cmp


# ---------------------------------------------------------------------- the JDK's sort, by hand
def test_java_sort_of_a_cycle_is_one_ascending_run():
    """a < b, b < c, c < a (rock, paper, scissors).  TimSort below MIN_MERGE: the run at the start is
    non-descending as long as ``cmp(a[i], a[i-1]) >= 0`` -- b after a, c after b -- so the whole list is one run
    and comes back unchanged, although c < a."""
    cyc = table({("a", "b"): -1, ("b", "c"): -1, ("c", "a"): -1})
    assert java_sort(["a", "b", "c"], cyc) == ["a", "b", "c"]
    # started elsewhere on the cycle: the same rule, another result (no order is "the" order of a cycle)
    assert java_sort(["b", "c", "a"], cyc) == ["b", "c", "a"]
    # c, b, a: strictly descending (b < c, a < b) -> reversed to a, b, c
    assert java_sort(["c", "b", "a"], cyc) == ["a", "b", "c"]


def test_java_sort_binary_insertion_with_an_intransitive_tie():
    """x ~ y and y ~ z (0) but x < z.  List [z, x, y]: cmp(x, z) < 0 starts a strictly descending run, cmp(y, x)
    = 0 ends it at 2 and it is reversed to [x, z]; binary insertion of y: mid = z, cmp(y, z) = 0 -> right of z.
    Result [x, z, y]: y, tied with both, lands AFTER z although it came first among the ties in no order."""
    tie = table({("x", "z"): -1})
    assert java_sort(["z", "x", "y"], tie) == ["x", "z", "y"]
    assert java_sort(["y", "z", "x"], tie) == ["y", "x", "z"]  # run y ~ z (0: non-descending), then x < z, x ~ y


def test_java_sort_is_a_stable_sort_for_a_strict_weak_order():
    rng = random.Random(5)
    for n in list(range(0, 40)) + [MIN_MERGE - 1, MIN_MERGE, 100]:
        items = [(rng.randint(0, 5), i) for i in range(n)]
        by_key = lambda a, b: (a[0] > b[0]) - (a[0] < b[0])  # noqa: E731 -- ties keep their order
        assert java_sort(items, by_key) == sorted(items, key=lambda t: t[0])


def test_java_sort_does_not_touch_its_argument():
    items = [3, 1, 2]
    assert java_sort(items, lambda a, b: (a > b) - (a < b)) == [1, 2, 3] and items == [3, 1, 2]


# ---------------------------------------------------------------------- the JDK's TreeSet, by hand
def test_treeset_of_a_cycle_and_a_dropped_tie():
    """a < b, b < c, c < a added in that order: b goes right of a, c LEFT of a (c < a); in order c, a, b --
    not the sort's a, b, c.  An element comparing 0 to one on its search path is not added (TreeSet.add)."""
    cyc = table({("a", "b"): -1, ("b", "c"): -1, ("c", "a"): -1})
    assert treeset_order(["a", "b", "c"], cyc) == ["c", "a", "b"]
    tie = table({("x", "z"): -1})  # y ~ x and y ~ z
    assert treeset_order(["x", "z", "y"], tie) == ["x", "z"]  # y meets x at the root: 0, dropped
    assert treeset_order([5, 1, 4, 2, 3], lambda a, b: (a > b) - (a < b)) == [1, 2, 3, 4, 5]


# ---------------------------------------------------------------------- IEEE arithmetic on exact numbers
def test_ieee_division_on_exact_numbers():
    assert ieee_div(F(1), F(2)) == F(1, 2) and isinstance(ieee_div(1, 3), F)
    assert ieee_div(F(3), 0) == INF and ieee_div(F(-3), 0) == -INF and isnan(ieee_div(F(0), 0))
    assert ieee_div(INF, F(2)) == INF and ieee_div(INF, F(-2)) == -INF and ieee_div(INF, 0) == INF
    assert isnan(ieee_div(INF, INF)) and ieee_div(F(5), INF) == 0 and isnan(ieee_div(NAN, F(1)))
    assert isnan(ieee_div(F(1), NAN))


def test_nan_comparisons():
    assert gt(F(2), F(1)) and not gt(F(1), F(1)) and not gt(NAN, F(1)) and not gt(F(1), NAN) and gt(INF, F(9))
    assert signum_diff(F(2), F(1)) == 1 and signum_diff(F(1), F(2)) == -1 and signum_diff(F(1), F(1)) == 0
    assert signum_diff(NAN, F(1)) == signum_diff(F(1), NAN) == 0 and signum_diff(INF, INF) == 0
    assert signum_diff(INF, F(1)) == 1 and signum_diff(-INF, INF) == -1
    # Double.compare: a total order with NaN on top, equal to itself
    vals = [NAN, INF, F(1), F(0), -INF, NAN]
    assert double_compare(NAN, NAN) == 0 and double_compare(NAN, INF) == 1 and double_compare(-INF, F(0)) == -1
    assert sorted(vals, key=cmp_to_key(double_compare))[:4] == [-INF, F(0), F(1), INF]
    for a in vals:
        for b in vals:
            assert double_compare(a, b) == (double_key(a) > double_key(b)) - (double_key(a) < double_key(b))


def test_string_key_is_utf16_order():
    """``String.compareTo`` compares UTF-16 code units: a character above the surrogates (U+FF61) sorts AFTER
    one outside the BMP (a surrogate pair, D83D...), where Python's str order (code points) puts it before."""
    assert string_key("Z") < string_key("a") < string_key("ab") < string_key("b")
    assert "\uff61" < "\U0001f600" and string_key("\U0001f600") < string_key("\uff61")


def test_go_integer_division_truncates():
    assert [go_int_div(7, 2), go_int_div(-7, 2), go_int_div(7, -2), go_int_div(-7, -2)] == [3, -3, -3, 3]
    assert -7 // 2 == -4  # what the helper is there for


# ---------------------------------------------------------------------- against the JDK
_JAVA = r"""
import java.util.*;
public class Probe {
  static double d(String w) {
    return w.equals("nan") ? Double.NaN : w.equals("inf") ? Double.POSITIVE_INFINITY
         : w.equals("-inf") ? Double.NEGATIVE_INFINITY : Double.parseDouble(w);
  }
  public static void main(String[] args) {
    Scanner in = new Scanner(System.in);
    while (in.hasNext()) {
      String kind = in.next();
      StringBuilder sb = new StringBuilder();
      if (kind.equals("A")) {
        double a = d(in.next()), b = d(in.next());
        sb.append((int) Math.signum(a - b)).append(' ').append(Double.compare(a, b)).append(' ')
          .append(a > b ? 1 : 0).append(' ').append(a / b);
      } else if (kind.equals("S")) {
        int n = in.nextInt();
        List<Integer> xs = new ArrayList<>();
        for (int i = 0; i < n; i++) xs.add(in.nextInt());
        final int[][] t = new int[n][n];
        for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) t[i][j] = in.nextInt();
        Collections.sort(xs, (x, y) -> t[x][y]);
        for (int v : xs) sb.append(v).append(' ');
      } else if (kind.equals("T")) {
        int n = in.nextInt();
        List<Integer> xs = new ArrayList<>();
        for (int i = 0; i < n; i++) xs.add(in.nextInt());
        final int[][] t = new int[n][n];
        for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) t[i][j] = in.nextInt();
        TreeSet<Integer> set = new TreeSet<>((x, y) -> t[x][y]);
        set.addAll(xs);
        for (int v : set) sb.append(v).append(' ');
      } else {
        int n = in.nextInt();
        String[] s = new String[n];
        for (int i = 0; i < n; i++) {
          String[] cps = in.next().split(",");
          StringBuilder w = new StringBuilder();
          for (String cp : cps) w.appendCodePoint(Integer.parseInt(cp));
          s[i] = w.toString();
        }
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) idx[i] = i;
        Arrays.sort(idx, (x, y) -> s[x].compareTo(s[y]));
        for (int v : idx) sb.append(v).append(' ');
      }
      System.out.println(sb.toString().trim());
    }
  }
}
"""

_WORDS = {"nan": NAN, "inf": INF, "-inf": -INF}


def _exact(w: str):
    return _WORDS[w] if w in _WORDS else F(w)


def _java_double(w: str) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(w, None) or float(w)


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="needs a JDK")
def test_every_function_matches_the_jdk(tmp_path):
    """``java_sort`` is ``Collections.sort`` on random comparison tables (below MIN_MERGE: any table, also cyclic
    ones and ties that are not transitive; from MIN_MERGE up: strict weak orders with ties); ``signum_diff``,
    ``treeset_order`` is a ``TreeSet``'s iteration order after ``addAll`` on random tables; ``double_compare``,
    ``gt`` and ``ieee_div`` are Java's on doubles with NaN and infinities; ``string_key``
    orders strings as ``String.compareTo``."""
    (tmp_path / "Probe.java").write_text(_JAVA)
    subprocess.run(["javac", "Probe.java"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    rng = random.Random(2027)
    lines, expect = [], []
    words = ["nan", "inf", "-inf", "0", "1", "0.5", "-2", "3"]
    for a in words:
        for b in words:
            lines.append(f"A {a} {b}")
            x, y = _exact(a), _exact(b)
            expect.append(("A", signum_diff(x, y), double_compare(x, y), int(gt(x, y)), ieee_div(x, y)))
    for _ in range(300):
        n = rng.randint(1, MIN_MERGE - 1)
        items = list(range(n))
        rng.shuffle(items)
        tab = [[0 if i == j else (rng.choice((-1, 0, 1)) if rng.random() < 0.4 else (i > j) - (i < j))
                for j in range(n)] for i in range(n)]
        for i in range(n):  # antisymmetric, as a comparator must at least be
            for j in range(i):
                tab[i][j] = -tab[j][i]
        lines.append(f"S {n} {' '.join(map(str, items))} {' '.join(str(v) for row in tab for v in row)}")
        expect.append(("S", java_sort(items, lambda a, b, tab=tab: tab[a][b])))
    for _ in range(40):
        n = rng.randint(MIN_MERGE, 90)
        key = [rng.randint(0, 8) for _ in range(n)]
        items = list(range(n))
        rng.shuffle(items)
        tab = [[(key[i] > key[j]) - (key[i] < key[j]) for j in range(n)] for i in range(n)]
        lines.append(f"S {n} {' '.join(map(str, items))} {' '.join(str(v) for row in tab for v in row)}")
        expect.append(("S", java_sort(items, lambda a, b, tab=tab: tab[a][b])))
    for _ in range(300):  # TreeSet: any antisymmetric table (cycles, intransitive ties, ties that drop an item)
        n = rng.randint(1, 40)
        items = list(range(n))
        rng.shuffle(items)
        tab = [[0 if i == j else (rng.choice((-1, 0, 1)) if rng.random() < 0.3 else (i > j) - (i < j))
                for j in range(n)] for i in range(n)]
        for i in range(n):
            for j in range(i):
                tab[i][j] = -tab[j][i]
        lines.append(f"T {n} {' '.join(map(str, items))} {' '.join(str(v) for row in tab for v in row)}")
        expect.append(("T", treeset_order(items, lambda a, b, tab=tab: tab[a][b])))
    for _ in range(60):
        n = rng.randint(1, 8)
        strs = ["".join(chr(rng.choice((0x41, 0x61, 0x7a, 0xe9, 0xff61, 0x1f600, 0x10000))) for _ in
                        range(rng.randint(0, 3))) or "x" for _ in range(n)]
        lines.append(f"C {n} " + " ".join(",".join(str(ord(c)) for c in s) for s in strs))
        expect.append(("C", sorted(range(n), key=lambda i: string_key(strs[i]))))
    out = subprocess.run(["java", "-cp", str(tmp_path), "Probe"], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    assert len(out) == len(expect)
    for row, want in zip(out, expect):
        got = row.split()
        if want[0] == "A":
            assert [int(v) for v in got[:3]] == list(want[1:4]), (row, want)
            q, ours = _java_double(got[3]), want[4]
            assert (math.isnan(q) and isnan(ours)) or q == float(ours), (row, want)
        else:
            assert [int(v) for v in got] == want[1], (row, want)

"""Slurm fair share (``mechanisms.ports.slurm``): the printed examples of SchedMD/slurm @
284c3b95f08a2dc2478499837b03355e1b9c5c75 reproduced to their printed digits, the Fair Tree walk and tie rules
as ``fair_tree.c`` codes them, and the policies stepping through an execution."""
from __future__ import annotations

from fractions import Fraction as F

import mechanisms  # noqa: F401  (registers)
from mechanisms.core.mechanism import REGISTERED
from mechanisms.core.time import execute
from mechanisms.ports.slurm.fairshare import INF, Assoc, Tree, classic, classic_factor, fair_tree
from mechanisms.ports.slurm.policy import decay_per_period
from mechverify.allocation import Allocation
from mechverify.execution import parse_execution
from mechverify.instances import parse_environment


def _doc_tree() -> Tree:
    """classic_fair_share.shtml, "Example" (Figure 3): root -> A (40) {B (30): user1; C (10): user2, user3 (1
    share each)}, D (60) {E (25): user4; F (35): user5}; actual usage (normalized to the machine) user1 0.2,
    user2 0.25, user4 0.25."""
    a = [Assoc("A", None, 40, False), Assoc("D", None, 60, False), Assoc("B", "A", 30, False),
         Assoc("C", "A", 10, False), Assoc("E", "D", 25, False), Assoc("F", "D", 35, False),
         Assoc("user1", "B", 1, True), Assoc("user2", "C", 1, True), Assoc("user3", "C", 1, True),
         Assoc("user4", "E", 1, True), Assoc("user5", "F", 1, True)]
    return Tree(a, {"user1": F(2, 10), "user2": F(25, 100), "user4": F(25, 100)})


def test_classic_doc_example_normalized_shares_effective_usage_and_factors():
    # the example's usages are fractions of the machine (they sum to 0.7): normalizer 1, not the root's usage
    r = classic(_doc_tree(), total=1)
    # "User 1 normalized share: 0.3" ... "User 5 normalized share: 0.35"
    assert [r.shares_norm[f"user{k}"] for k in range(1, 6)] == [F(3, 10), F(5, 100), F(5, 100), F(25, 100), F(35, 100)]
    # "Account A's effective usage is therefore equal to .45.  Account D's effective usage is equal to .25."
    assert (r.usage_efctv["A"], r.usage_efctv["D"]) == (F(45, 100), F(25, 100))
    # "Account B effective usage: 0.2 + ((0.45 - 0.2) * 30 / 40) = 0.3875", C = 0.3, E = 0.25
    assert (r.usage_efctv["B"], r.usage_efctv["C"], r.usage_efctv["E"]) == (F(3875, 10000), F(3, 10), F(1, 4))
    # "Account F effective usage: 0.0 + ((0.25 - 0.0) * 35 / 60) = 0.1458": exactly 7/48 = 0.145833..., printed to 4
    assert r.usage_efctv["F"] == F(7, 48) and round(float(r.usage_efctv["F"]), 4) == 0.1458
    # users: 0.3875, 0.275, 0.15, 0.25, 0.1458 (user5 = F's 7/48, printed rounded)
    ue = [r.usage_efctv[f"user{k}"] for k in range(1, 6)]
    assert ue[:4] == [F(3875, 10000), F(275, 1000), F(15, 100), F(25, 100)] and ue[4] == F(7, 48)
    # "User 1 fair-share factor: 2**(-.3875 / .3) = 0.408479" ... printed to 6 decimals
    printed = [0.408479, 0.022097, 0.125000, 0.500000, 0.749154]
    got = [classic_factor(r.usage_efctv[f"user{k}"], r.shares_norm[f"user{k}"]) for k in range(1, 6)]
    assert [round(g, 6) for g in got] == printed
    # user5's printed 0.749154 is 2**(-(7/48)/0.35) = 2**(-5/12) = 0.7491535...: the exact 7/48, not the printed
    # .1458 (2**(-.1458/.35) = 0.749203 would round differently)
    assert round(2 ** (-0.1458 / 0.35), 6) != 0.749154
    # "user 5's job would be granted the highest scheduling priority": the smallest exact UE/S
    assert min(range(1, 6), key=lambda k: r.ratio(f"user{k}")) == 5
    # the order never depends on the normalizer (the code's: the root's raw usage, 0.7 here)
    r2 = classic(_doc_tree())
    assert sorted(range(1, 6), key=lambda k: r2.ratio(f"user{k}")) == sorted(range(1, 6), key=lambda k: r.ratio(f"user{k}"))


def test_fair_tree_doc_overview_example_and_walk():
    # fair_tree.shtml "Overview for End Users": root => Acct1 => Acct12 => UserA, root => Acct1 => Acct16 => UserB;
    # "If UserB has a higher FairShare value than UserA, Acct16 has a higher Level FS value than Acct12".  The doc
    # prints no numbers here; the usages are ours (Acct12 used 3, Acct16 used 1, equal shares).
    a = [Assoc("Acct1", None, 1, False), Assoc("Acct12", "Acct1", 1, False), Assoc("Acct16", "Acct1", 1, False),
         Assoc("UserA", "Acct12", 1, True), Assoc("UserB", "Acct16", 1, True)]
    r = fair_tree(Tree(a, {"UserA": F(3), "UserB": F(1)}))
    # LF = S/U: Acct12 (1/2)/(3/4) = 2/3, Acct16 (1/2)/(1/4) = 2
    assert (r.level_fs["Acct12"], r.level_fs["Acct16"]) == (F(2, 3), F(2))
    # "The FairShare value is the user's rank divided by the total number of user associations. The highest
    # ranked user receives a 1.0 fairshare value."
    assert r.walk == ["UserB", "UserA"] and (r.factor("UserB"), r.factor("UserA")) == (1, F(1, 2))
    # "Level FS values are infinity if the association has no usage"
    r0 = fair_tree(Tree(a, {}))
    assert r0.level_fs["UserA"] == INF and r0.level_fs["Acct12"] == INF


def test_fair_tree_doc_example_tree_and_tie_rules():
    # the classic example's tree under Fair Tree (our derivation; LF = S/U at each level, exact):
    # A: S 40/100, U 0.45/0.7 -> 28/45; D: 60/100 / (0.25/0.7) -> 42/25.  D first.  Under D: E (25/60)/(1) = 5/12,
    # F: no usage -> inf: user5 (rank 5), then user4 (4).  Under A: B (30/40)/(0.2/0.45) = 27/16 > C 9/20: user1 (3);
    # in C: user3 unused (inf, 2), user2 (1/2)/(1) = 1/2 (1).
    r = fair_tree(_doc_tree())
    assert r.walk == ["user5", "user4", "user1", "user3", "user2"]
    assert [r.rank[f"user{k}"] for k in range(1, 6)] == [3, 1, 2, 4, 5]
    assert (r.level_fs["A"], r.level_fs["D"], r.level_fs["B"], r.level_fs["C"]) == (F(28, 45), F(42, 25), F(27, 16), F(9, 20))
    # tie rule 1: sibling users with the same LF receive the same rank; the next distinct one gets rnt
    a = [Assoc("x", None, 1, True), Assoc("y", None, 1, True), Assoc("z", None, 1, True)]
    r = fair_tree(Tree(a, {"x": F(1), "y": F(1), "z": F(2)}))
    assert (r.rank["x"], r.rank["y"], r.rank["z"]) == (3, 3, 1)
    # tie rule (user vs account): a user with the same LF as a sibling account -> the account's highest user gets
    # the user's rank (users sort first)
    a = [Assoc("acct", None, 1, False), Assoc("u", None, 1, True), Assoc("v", "acct", 1, True), Assoc("w", "acct", 1, True)]
    r = fair_tree(Tree(a, {"u": F(1), "v": F(1)}))
    assert r.walk == ["u", "w", "v"] and (r.rank["u"], r.rank["w"], r.rank["v"]) == (3, 3, 1)
    # tied sibling accounts: the code (_count_tied_accounts returns 0) descends them one after the other, the
    # second starting tied; the doc's rule merges their children before sorting
    a = [Assoc("P", None, 1, False), Assoc("Q", None, 1, False), Assoc("p1", "P", 1, True), Assoc("p2", "P", 1, True),
         Assoc("q1", "Q", 1, True), Assoc("q2", "Q", 1, True)]
    use = {"p1": F(2), "q1": F(1), "q2": F(1)}  # P and Q both used 2: LF 1 each
    code, doc = fair_tree(Tree(a, use)), fair_tree(Tree(a, use), merge_tied=True)
    assert code.walk == ["p2", "p1", "q1", "q2"] and [code.rank[u] for u in code.walk] == [4, 3, 3, 3]
    assert doc.walk == ["p2", "q1", "q2", "p1"] and [doc.rank[u] for u in doc.walk] == [4, 3, 3, 1]


def test_decay_is_upstreams_linearised_factor_exactly():
    assert decay_per_period(10, 1) == F(9307, 10000)
    assert decay_per_period(0, 5) == 1
    # ~ a half after H seconds (the code's first-order approximation of 2**(-1/H))
    assert abs(float(decay_per_period(10, 10)) - 0.5) < 0.02


def test_policies_step_with_decayed_usage_and_no_preemption():
    ex = parse_execution({
        "resources": ["cpu"], "servers": [{"name": "s1", "capacity": [4]}],
        "queues": [{"name": "A", "weight": 1}, {"name": "B", "weight": 1}],
        "users": [{"name": "u1", "demand": [1], "tasks": 4, "queue": "A"},
                  {"name": "u2", "demand": [1], "tasks": 4, "queue": "B"}],
        "end": 6,
        "events": [{"t": 2, "kind": "finish", "user": "u1", "tasks": 2},
                   {"t": 3, "kind": "finish", "user": "u1", "tasks": 2}]})
    for name in ("slurm-classic", "slurm-fairtree"):
        steps = execute(REGISTERED[name], ex, exact=True)
        tasks = [[sum(row) for row in s.alloc.x] for s in steps]
        # t=0: no usage, a tie: arrival order, u1 takes the pool; t=2: u1's 2 finished tasks free 2 CPUs for u2
        # (u1's running 2 are not preempted); t=3: u1 is done, u2 runs 4
        assert tasks == [[4, 0], [2, 2], [0, 4]]
        # u1's usage at t=2: tick 1: 4 x 0.9307; tick 2: (3.7228 + 4) x 0.9307 = 7.18760996
        assert steps[1].alloc.info["usage"]["u1"] == (F(4) * F(9307, 10000) + 4) * F(9307, 10000)


def test_order_facet_reads_the_state_as_usage():
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [8]}],
                             "users": [{"name": "a", "demand": [1]}, {"name": "b", "demand": [1]},
                                       {"name": "c", "demand": [1], "weight": 2}]})
    state = Allocation(env, ((F(2),), (F(1),), (F(2),)), "state", True)
    for name in ("slurm-classic", "slurm-fairtree"):
        spec = REGISTERED[name].order
        # b used least for its share; c used as much as a with twice the share
        assert spec.compare(state, 1, 0) < 0 and spec.compare(state, 2, 0) < 0
        assert spec.compare(state, 0, 0) == 0

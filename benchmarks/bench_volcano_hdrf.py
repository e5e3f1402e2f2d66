"""Benchmark: ``volcano-hdrf`` (src/mechanisms/ports/volcano/) on queue trees of growing size, against the literal
full recomputation after every task (:func:`mechanisms.ports.volcano.tree.volcano_hdrf_reference`).  Not a test:

    python benchmarks/bench_volcano_hdrf.py [--tasks 1000,10000,20000] [--reference 250,500,1000] [--load 1] [--seed 0]
    python benchmarks/bench_volcano_hdrf.py --ties 1000 [--orders 5] [--seed 0]

Instance (seeded) for T tasks: T/10 jobs of 10 tasks each, 10 jobs per leaf queue (T/100 leaf queues), 10 leaf
queues per top-level queue, queue weights in {1..4}; per-task demands {1..4}/10 cpu, {1..8}/10 mem, {0,1}/10 gpu;
one server whose capacity is ``--load`` times the jobs' whole request (1: every task fits, the resources fill
up with the last tasks).  The instance format caps a capacity at 10^4, hence at most ~2x10^4 tasks here.

Prints, per size, the tasks placed, the time of ``mechanisms.allocate("volcano-hdrf", env)`` (the registry:
setting check, the mechanism, the output check) and the time per task; then the reference on the sizes of
``--reference`` (it re-evaluates the whole tree and compares every user at every step: O(users x tree) per
task), checking that both give the same allocation.

``--ties N``: instead, the tie rule measured on N random whole-task trees (``random_tree``) with an independent
port of upstream's loop (``Port``: no code shared with the mechanism): how many allocations change with the
old convention, with float64, with the lazy drop, with upstream's heap (stale keys), and with the heap's push
order (Go's randomised map iteration); and a cross-check that the port of the rule equals the mechanism.
"""
from __future__ import annotations

import argparse
import math
import random
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mechanisms  # noqa: E402
from mechanisms.ports.volcano.tree import volcano_hdrf_reference  # noqa: E402
from mechverify.instances import parse_environment  # noqa: E402


def build(tasks: int, seed: int = 0, load: float = 1.0):
    rng = random.Random(seed)
    jobs = max(1, tasks // 10)
    leaves = max(1, jobs // 10)
    tops = max(1, leaves // 10)
    queues = [{"name": f"t{i}", "weight": rng.randint(1, 4)} for i in range(tops)]
    leaf_names = []
    for k in range(leaves):
        name = f"t{k % tops}/q{k}"
        queues.append({"name": name, "weight": rng.randint(1, 4)})
        leaf_names.append(name)
    users, request = [], [0, 0, 0]
    for j in range(jobs):
        d = [rng.randint(1, 4), rng.randint(1, 8), rng.randint(0, 1)]
        for r in range(3):
            request[r] += d[r]  # 10 tasks of d/10
        users.append({"name": f"j{j:05d}", "demand": [f"{x}/10" for x in d], "tasks": 10,
                      "queue": leaf_names[j % leaves]})
    cap = [max(1, math.ceil(load * v)) for v in request]
    return parse_environment({"resources": ["cpu", "mem", "gpu"], "servers": [{"name": "n", "capacity": cap}],
                              "queues": queues, "users": users})


def timed(f):
    t0 = time.perf_counter()
    a = f()
    return a, time.perf_counter() - t0


# ---------------------------------------------------------------------------------------- --ties: the tie rule
# An independent port (it shares no code with src/mechanisms/ports/volcano/) of upstream's allocate loop in
# hierarchy mode, volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c: the tree of drf.go
# (buildHierarchy, updateHierarchicalShare, resourceSaturated, calculateShare) recomputed after every task,
# compareQueues (drf.go 160-184), QueueOrderFn / JobOrderFn with their fallbacks (session_plugins.go 717-798),
# and allocateResources (allocate.go 283-368) with the queue heap as container/heap runs it
# (util/priority_queue.go).  Knobs: the arithmetic (exact or float64), the tie rule ("creation": upstream's
# fallback, queues and jobs in declaration order, the root's jobs in a queue created first; "old": the rule
# volcano-hdrf used before, the shallower queue, then the path, jobs by name), the selection ("least": the
# least queue at every pop, as the mechanism does -- where the order is cyclic, the earliest created of the
# queues compareQueues puts no queue before; "heap": upstream's heap with its stale keys, the queues pushed in
# a given job order, as Go's map iteration would give it) and when a job that cannot take a task leaves
# ("eager": at once; "lazy": when popped, as upstream).


class _Node:
    __slots__ = ("weight", "children", "alloc", "share", "saturated", "request", "job")

    def __init__(self, weight, job=None):
        self.weight, self.children, self.job = weight, ({} if job is None else None), job
        self.alloc, self.share, self.saturated, self.request = None, 0, False, None


class Port:
    def __init__(self, env, *, exact=True, tie="creation", select="least", drop="eager", push_order=None):
        self.env, self.tie, self.select, self.drop = env, tie, select, drop
        num = (lambda v: Fraction(v)) if exact else (lambda v: float(v))
        self.num = num
        R = env.n_resources
        self.total = [num(c) for c in env.capacity[0]]
        self.dem = [[num(d) for d in env.demand[j]] for j in range(env.n_users)]
        self.bound = [None if b is None else math.floor(b) for b in env.tasks]
        self.tasks = [0] * env.n_users
        self.used = [num(0)] * R
        self.push_order = push_order
        self.cycles = 0
        # the tree: path segments under "root"; a queue's weights are its ancestors' weights (>= 1)
        self.root = _Node(num(1))
        self.leaf = []
        for j in range(env.n_users):
            node = self.root
            for q in env.user_path(j):
                seg = env.queues[q].split("/")[-1]
                if seg not in node.children:
                    node.children[seg] = _Node(max(num(env.queue_weight[q]), num(1)))
                node = node.children[seg]
            lf = _Node(num(1), job=j)
            node.children[f"job:{j}"] = lf
            self.leaf.append(lf)
        self._update()

    # -- drf.go ------------------------------------------------------------------------------------------
    def _calc(self, alloc):
        return max((alloc[r] / self.total[r] for r in range(len(alloc)) if self.total[r] > 0), default=self.num(0))

    def _update(self):
        demanding = [self.total[r] > 0 and self.used[r] < self.total[r] for r in range(len(self.total))]

        def walk(node):
            if node.children is None:
                j = node.job
                node.alloc = [self.tasks[j] * d for d in self.dem[j]]
                node.share = self._calc(node.alloc)
                req = [None if self.bound[j] is None else self.bound[j] * d for d in self.dem[j]]
                node.saturated = any(a > 0 and ((q is not None and q != 0 and a >= q) or
                                                (not demanding[r] and self.dem[node.job][r] != 0))
                                     for r, (a, q) in enumerate(zip(node.alloc, req)))
                return
            m = self.num(1)
            for c in node.children.values():
                walk(c)
                if c.share != 0 and not c.saturated and c.share < m:
                    m = c.share
            alloc = [self.num(0)] * len(self.total)
            for c in node.children.values():
                if c.share != 0:
                    f = 1 if c.saturated else m / c.share
                    alloc = [a + x * f for a, x in zip(alloc, c.alloc)]
            node.alloc, node.share = alloc, self._calc(alloc)
            node.saturated = all(c.saturated for c in node.children.values())

        walk(self.root)

    def _segs(self, q):
        return ["root"] + ([] if q is None else self.env.queues[q].split("/"))

    def compare_queues(self, lq, rq):
        lp, rp = self._segs(lq), self._segs(rq)
        ln = rn = self.root
        depth = min(len(lp), len(rp))
        for i in range(depth):
            if not ln.saturated and rn.saturated:
                return -1
            if ln.saturated and not rn.saturated:
                return 1
            lv, rv = ln.share / ln.weight, rn.share / rn.weight
            if lv != rv:
                return -1 if lv < rv else 1
            if i < depth - 1:
                ln, rn = ln.children[lp[i + 1]], rn.children[rp[i + 1]]
        return 0

    # -- session_plugins.go ------------------------------------------------------------------------------
    def queue_less(self, lq, rq):
        c = self.compare_queues(lq, rq)
        if c:
            return c < 0
        if self.tie == "creation":
            return (-1 if lq is None else lq) < (-1 if rq is None else rq)
        env = self.env
        return (env.queue_depth(lq), self._segs(lq)) < (env.queue_depth(rq), self._segs(rq))

    def job_less(self, a, b):
        sa, sb = self.leaf[a].share, self.leaf[b].share
        if sa != sb:
            return sa < sb
        return a < b if self.tie == "creation" else self.env.users[a] < self.env.users[b]

    # -- allocate.go -------------------------------------------------------------------------------------
    def _fits(self, j):
        return (self.bound[j] is None or self.tasks[j] < self.bound[j]) and \
            all(self.used[r] + d <= self.total[r] for r, d in enumerate(self.dem[j]) if d)

    def _place(self, j):
        self.tasks[j] += 1
        self.used = [u + d for u, d in zip(self.used, self.dem[j])]
        self._update()

    def _pick_queue(self, queues):
        """The least queue under queue_less, or (a cycle) the earliest created of those compareQueues puts no
        queue before."""
        for q in queues:
            if all(q == r or self.queue_less(q, r) for r in queues):
                return q
        self.cycles += 1
        und = [q for q in queues if not any(self.compare_queues(r, q) < 0 for r in queues)]
        return min(und, key=lambda q: -1 if q is None else q)

    def run(self, max_tasks=10_000):
        env = self.env
        if self.select == "heap":
            return self._run_heap(max_tasks)
        alive = [True] * env.n_users
        for _ in range(max_tasks):
            if self.drop == "eager":
                for j in range(env.n_users):
                    if alive[j] and not self._fits(j):
                        alive[j] = False
            cand = [j for j in range(env.n_users) if alive[j]]
            if not cand:
                return self.tasks
            q = self._pick_queue(sorted({env.user_queue[j] for j in cand}, key=lambda q: -1 if q is None else q))
            mine = [j for j in cand if env.user_queue[j] == q]
            j = mine[0]
            for k in mine[1:]:
                if self.job_less(k, j):
                    j = k
            if self._fits(j):
                self._place(j)
            else:
                alive[j] = False
        raise RuntimeError("too many tasks")

    def _run_heap(self, max_tasks):
        env = self.env
        order = list(range(env.n_users)) if self.push_order is None else self.push_order
        H: list = []
        jobs: dict = {}
        for j in order:  # buildAllocateContext: a queue is pushed when its first job is met
            q = env.user_queue[j]
            if q not in jobs:
                jobs[q] = []
                _go_push(H, q, self.queue_less)
            _go_push(jobs[q], j, self.job_less)
        for _ in range(max_tasks * 4 + 100):
            if not H:
                return self.tasks
            q = _go_pop(H, self.queue_less)
            if not jobs[q]:
                continue
            j = _go_pop(jobs[q], self.job_less)
            if self._fits(j):
                self._place(j)
                if self.bound[j] is None or self.tasks[j] < self.bound[j]:
                    _go_push(jobs[q], j, self.job_less)  # tasks left: the job goes back
            # else: every task fails, the job is not pushed back
            _go_push(H, q, self.queue_less)
        raise RuntimeError("too many tasks")


def _go_push(h, x, less):
    """container/heap Push: append, then up."""
    h.append(x)
    j = len(h) - 1
    while j > 0:
        i = (j - 1) // 2
        if not less(h[j], h[i]):
            break
        h[i], h[j] = h[j], h[i]
        j = i


def _go_pop(h, less):
    """container/heap Pop: swap the root with the last, down over the rest, take the last."""
    n = len(h) - 1
    h[0], h[n] = h[n], h[0]
    i = 0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            break
        j = j1
        if j1 + 1 < n and less(h[j1 + 1], h[j1]):
            j = j1 + 1
        if not less(h[j], h[i]):
            break
        h[i], h[j] = h[j], h[i]
        i = j
    return h.pop()


def random_tree(rng):
    """A random whole-task instance on a queue tree (depth <= 3), drawn twice: ``(shuffled, plain)``.  Shuffled:
    the queues declared in a random order (the creation order then differs from the paths'), user names
    unrelated to the user order.  Plain: the same instance with the queues declared in path order and the users
    named in user order, so that the old convention and the creation order can differ only where
    ``compareQueues`` ties queues of different depths.  Users at the root and in inner queues, 1-3 resources,
    bounds, weights below 1."""
    paths: list[str] = []
    for k in range(rng.randint(1, 7)):
        p = (rng.choice(paths) + "/" if paths and rng.random() < 0.6 else "") + f"q{k}"
        if p.count("/") < 3:
            paths.append(p)
    R = rng.randint(1, 3)
    users = []
    for j in range(rng.randint(2, 6)):
        dem = [rng.choice([0, 1, 1, 2, 3, "1/2"]) for _ in range(R)]
        if not any(dem):
            dem[0] = 1
        u = {"name": f"u{rng.randint(0, 99):02d}{j}", "demand": dem}
        if rng.random() < 0.6:
            u["tasks"] = rng.choice([1, 2, 3, 5, 8])
        if rng.random() < 0.85:
            u["queue"] = rng.choice(paths)
        users.append(u)
    cap = [rng.choice([2, 3, 5, 8, 12]) for _ in range(R)]
    weight = {p: rng.choice([1, 1, 2, 3, "1/2"]) for p in paths}
    shuffled = list(paths)
    rng.shuffle(shuffled)

    def env(order, names):
        return parse_environment({"resources": [f"r{r}" for r in range(R)],
                                  "servers": [{"name": "n", "capacity": cap}],
                                  "queues": [{"name": p, "weight": weight[p]} for p in order],
                                  "users": [dict(u, name=n) for u, n in zip(users, names)]})

    return (env(shuffled, [u["name"] for u in users]),
            env(sorted(paths, key=lambda p: p.split("/")), [f"u{j}" for j in range(len(users))]))


def ties(n: int, seed: int, orders: int) -> None:
    """On ``n`` random trees: how often the tie rules, the arithmetic, the heap and the drop time change the
    allocation (each: instances whose task counts differ from the mechanism's)."""
    rng = random.Random(seed)
    keys = ("mismatch", "old", "old-plain", "float", "lazy", "heap", "heap-float", "heap-orders", "cycle",
            "cycle-plain")
    count = dict.fromkeys(keys, 0)
    for _ in range(n):
        env, plain = random_tree(rng)
        got = [int(t) for t in mechanisms.allocate("volcano-hdrf", env).totals()]
        new = Port(env)
        count["mismatch"] += new.run() != got  # the independent port of the rule = the mechanism
        count["cycle"] += new.cycles > 0
        count["old"] += Port(env, tie="old").run() != got
        count["float"] += Port(env, exact=False).run() != got
        count["lazy"] += Port(env, drop="lazy").run() != got
        count["heap"] += Port(env, select="heap").run() != got
        count["heap-float"] += Port(env, select="heap", exact=False).run() != got
        outs = set()
        for _ in range(orders):
            perm = list(range(env.n_users))
            rng.shuffle(perm)
            outs.add(tuple(Port(env, select="heap", exact=False, push_order=perm).run()))
        count["heap-orders"] += len(outs) > 1
        got_plain = [int(t) for t in mechanisms.allocate("volcano-hdrf", plain).totals()]
        new_plain = Port(plain)
        count["mismatch"] += new_plain.run() != got_plain
        count["cycle-plain"] += new_plain.cycles > 0
        count["old-plain"] += Port(plain, tie="old").run() != got_plain
    print(f"{n} random whole-task trees (seed {seed}); instances whose allocation differs from volcano-hdrf's:")
    print(f"  independent port of the same rule (exact, least queue, creation ties), both draws: {count['mismatch']}")
    print(f"  the old convention (shallower queue, then path; jobs by name):                      {count['old']}")
    print(f"    the same, queues declared in path order and users named in user order:           {count['old-plain']}")
    print(f"  the same rule in float64:                                                          {count['float']}")
    print(f"  a job that cannot take a task leaves when popped (lazy):                           {count['lazy']}")
    print(f"  upstream's heap (stale keys; queues pushed in user order), exact:                  {count['heap']}")
    print(f"  the same heap in float64:                                                          {count['heap-float']}")
    print(f"instances where the creation fallback was cyclic at some pop: {count['cycle']} "
          f"(path-order declarations: {count['cycle-plain']})")
    print(f"instances where upstream's heap (float64) gives different allocations for {orders} random push "
          f"orders (Go's map iteration): {count['heap-orders']}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", default="1000,10000,20000", help="comma-separated sizes (whole tasks requested)")
    p.add_argument("--reference", default="250,500,1000", help="sizes for the full-recompute reference ('' = none)")
    p.add_argument("--load", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ties", type=int, default=0, help="measure the tie rule on this many random trees instead")
    p.add_argument("--orders", type=int, default=5, help="--ties: random heap push orders per tree")
    a = p.parse_args()
    if a.ties:
        ties(a.ties, a.seed, a.orders)
        return
    head = f"{'tasks':>7} {'jobs':>6} {'queues':>6} {'placed':>7} {'seconds':>8} {'us/task':>8}"
    print(head + "  (volcano-hdrf, registry)")
    for n in [int(v) for v in a.tasks.split(",") if v]:
        env = build(n, a.seed, a.load)
        alloc, dt = timed(lambda: mechanisms.allocate("volcano-hdrf", env))
        placed = alloc.info["steps"]
        print(f"{n:7d} {env.n_users:6d} {env.n_queues:6d} {placed:7d} {dt:8.3f} {1e6 * dt / max(placed, 1):8.1f}"
              f"  (tree rebuilds: {alloc.info['rebuilds']})")
    sizes = [int(v) for v in a.reference.split(",") if v]
    if sizes:
        print(head + "  (reference: full recompute per task)   fast   same allocation")
        for n in sizes:
            env = build(n, a.seed, a.load)
            ref, dt = timed(lambda: volcano_hdrf_reference(env))
            fast, dt_fast = timed(lambda: mechanisms.allocate("volcano-hdrf", env))
            placed = ref.info["steps"]
            print(f"{n:7d} {env.n_users:6d} {env.n_queues:6d} {placed:7d} {dt:8.3f} {1e6 * dt / max(placed, 1):8.1f}"
                  f"  {'':38s}{dt_fast:6.3f} s  {ref.x == fast.x}")


if __name__ == "__main__":
    main()

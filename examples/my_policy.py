"""A scheduler's ordering policy ported to mechverify with ``mechverify.policies`` (README, "Audit your
scheduler's policy").

The toy policy: the next whole task goes to the client with the fewest running tasks per unit of weight
(a round robin that ignores what a task costs); ties go to the client whose task is the smaller share of
the cluster, then to the name.  ``progressive_filling`` runs the scheduler's loop: one task at a time to
the least client that can still take one (bound not reached, the task fits on an eligible server: the
first fitting server in server order).  The claims are made up; the audit refutes EF.
"""
import mechverify
from mechverify.policies import progressive_filling


@mechverify.mechanism(name="fewest-tasks", claims={"sp": "holds", "ef": "holds"}, divisible=False,
                      placement=True, bounds=True, weights=True, source="examples/my_policy.py (made-up claims)")
def fewest_tasks(env):
    """Fewest tasks per weight first; ties: the smaller task (dominant share of the pool), then the name."""
    totals = env.total_capacity()
    task_size = [max((d / t for d, t in zip(env.demand[j], totals) if t), default=0) for j in range(env.n_users)]

    def key(state, j):  # reads only user j's own state: the loop keeps a heap (local=True)
        return (state.tasks[j] / env.weight[j], task_size[j], env.users[j])

    return progressive_filling(env, key, name="fewest-tasks")

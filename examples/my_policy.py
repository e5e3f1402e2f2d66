"""A scheduler's ordering policy ported to mechverify with ``mechverify.policies`` (README, "Audit your
scheduler's policy").

The toy policy: the next whole task goes to the client with the fewest running tasks per unit of weight
(a round robin that ignores what a task costs); ties go to the client whose task is the smaller share of
the cluster, then to the name.  ``progressive_filling`` runs the scheduler's loop: one task at a time to
the least client that can still take one (bound not reached, the task fits on an eligible server: the
first fitting server in server order).  The claims are made up; the audit refutes EF.

The same key is declared as the policy's ORDER (``order=fewest_tasks_key``): ``python -m verifier order
examples/my_policy.py:fewest_tasks INSTANCE`` prints it in the instance's state, and the ``order`` and ``share``
properties check it (docs/orders-and-placement.md).
"""
import mechverify
from mechverify.policies import progressive_filling


def fewest_tasks_key(state, j):
    """Tasks per weight, then the task's size (its dominant share of the pool), then the name.  Reads only user
    ``j``'s own state, so the loop keeps a heap (``local=True``)."""
    env = state.env
    size = max((d / t for d, t in zip(env.demand[j], state.totals) if t), default=0)
    return (state.tasks[j] / env.weight[j], size, env.users[j])


@mechverify.mechanism(name="fewest-tasks", claims={"sp": "holds", "ef": "holds"}, divisible=False,
                      placement=True, bounds=True, weights=True, source="examples/my_policy.py (made-up claims)",
                      order=fewest_tasks_key)
def fewest_tasks(env):
    """Fewest tasks per weight first; ties: the smaller task (dominant share of the pool), then the name."""
    return progressive_filling(env, fewest_tasks_key, name="fewest-tasks")

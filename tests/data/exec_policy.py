"""A policy program for the exec protocol's tests (tests/mechanisms/test_exec_policy.py), run as
``exec:<python> tests/data/exec_policy.py MODE [PIDFILE]``: well-behaved or hostile by ``MODE``.

* ``exact``: answers x[j][s] = "1/(j+2)" as exact strings; ``floats``: the same as JSON floats (1/3 is not
  exact in binary); ``zeros``: every entry the integer 0;
* ``crash``: exits with code 3 on every request; ``garbage``: answers a line that is not JSON; ``wrong-id``:
  answers with another id; ``error``: answers an error; ``hang``: never answers; ``negative``: answers -1;
* ``version2``: its handshake speaks version 2; ``chatty``: prints a log line before its handshake;
  ``silent``: exits without a handshake; ``mute``: never writes one; ``bad-setting``: its handshake has an unknown setting key;
* ``order``: provides an order too -- users by their dominant share in the state (Mesos' DRF sorter: the
  largest of tasks x d[j][r] / the pooled c[r]), ties grouped; ``cycle``: its comparator is rock, paper,
  scissors on the first three users (u1 before u2 before u3 before u1), not a strict weak order;
  ``order-missing``: its order leaves out the last user.

With PIDFILE it writes its process id there first (the tests check it was killed).
"""
import json
import os
import sys
import time
from fractions import Fraction

mode = sys.argv[1]
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as fh:
        fh.write(str(os.getpid()))


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if mode == "chatty":
    print("starting up ...", flush=True)
if mode == "silent":
    sys.exit(0)
if mode == "mute":
    time.sleep(3600)
hello = {"protocol": "mechverify-exec", "version": 2 if mode == "version2" else 1, "name": f"test-{mode}",
         "provides": ["allocate"], "claims": {"sp": "holds"}, "source": "tests/data/exec_policy.py"}
if mode == "bad-setting":
    hello["setting"] = {"many_servers": True}
if mode in ("order", "cycle", "order-missing"):
    hello["provides"] = ["allocate", "order"]
say(hello)


def shares(env, state):
    """Every user's dominant share of the pooled capacity in the state."""
    R = len(env["resources"])
    total = [sum(Fraction(s["capacity"][r]) for s in env["servers"]) for r in range(R)]
    return [max([sum(Fraction(t) for t in row) * Fraction(u["demand"][r]) / total[r]
                 for r in range(R) if total[r] > 0] or [Fraction(0)]) for u, row in zip(env["users"], state)]

for line in sys.stdin:
    request = json.loads(line)
    rid, env = request["id"], request["instance"]
    J, S = len(env["users"]), len(env["servers"])
    print(f"request {rid}", file=sys.stderr, flush=True)  # a log line: the finding of a failing call shows it
    if request["op"] == "order":
        share = shares(env, request["state"])
        answer = {"id": rid, "shares": [str(v) for v in share]}
        if mode == "cycle":
            cmp = [[(share[i] > share[j]) - (share[i] < share[j]) for j in range(J)] for i in range(J)]
            for a, b in ((0, 1), (1, 2), (2, 0)):
                cmp[a][b], cmp[b][a] = -1, 1
            answer["compare"] = cmp
        else:
            levels = sorted(set(share))
            answer["order"] = [[u["name"] for u, v in zip(env["users"], share) if v == level] for level in levels]
            if mode == "order-missing":
                answer["order"] = [[u for u in group if u != env["users"][-1]["name"]] for group in answer["order"]]
                answer["order"] = [group for group in answer["order"] if group]
        say(answer)
        continue
    if mode == "crash":
        sys.exit(3)
    if mode == "garbage":
        sys.stdout.write("hello world\n")
        sys.stdout.flush()
        continue
    if mode == "hang":
        time.sleep(3600)
    if mode == "error":
        say({"id": rid, "error": "no allocation for you"})
    elif mode == "wrong-id":
        say({"id": rid + 1, "tasks": [[0] * S for _ in range(J)]})
    elif mode == "negative":
        say({"id": rid, "tasks": [[-1] * S for _ in range(J)]})
    elif mode == "zeros":
        say({"id": rid, "tasks": [[0] * S for _ in range(J)]})
    elif mode == "floats":
        say({"id": rid, "tasks": [[1 / (j + 2)] * S for j in range(J)]})
    else:
        say({"id": rid, "tasks": [[f"1/{j + 2}"] * S for j in range(J)]})

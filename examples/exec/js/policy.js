#!/usr/bin/env node
// An equal split, as a policy program in JavaScript (docs/exec-protocol.md).
//
// Every server is split equally among the users: user j runs, on server s, as many tasks as fit in 1/J of
// that server (x[j][s] = min over the resources r it demands of c[s][r] / (J d[j][r])).  What a user gets
// depends on nothing another user reports, and no user can run more with another's share than with its own,
// so the split is strategy-proof, envy-free and gives every user its share; it is not Pareto-optimal (what a
// user cannot use stays idle).  The handshake says so (claims); `python -m verifier check` shows it.
//
// Numbers: the instance's numbers come as exact strings ("9", "3/4"); this policy computes in floats and
// answers JSON numbers, which mechverify takes exactly as written and judges within the policy's tolerance.
//
//   python -m verifier check "exec:node examples/exec/js/policy.js" examples/000-fig1.json
"use strict";
const readline = require("readline");

function num(text) {  // "p/q", an integer or a decimal -> a float
  const [p, q] = String(text).split("/");
  return q === undefined ? Number(p) : Number(p) / Number(q);
}

function equalSplit(instance) {
  const J = instance.users.length;
  return instance.users.map((user) => instance.servers.map((server) => {
    let tasks = Infinity;
    user.demand.forEach((d, r) => {
      if (num(d) > 0) tasks = Math.min(tasks, num(server.capacity[r]) / (J * num(d)));
    });
    return Number.isFinite(tasks) ? tasks : 0;  // a user that demands nothing here runs no task
  }));
}

const say = (message) => process.stdout.write(JSON.stringify(message) + "\n");

// the handshake: first, before any request
say({
  protocol: "mechverify-exec", version: 1, name: "equal-split-js",
  title: "Equal split of every server (JavaScript, floats)",
  source: "examples/exec/js/policy.js",
  provides: ["allocate"],
  claims: { sp: "holds", ef: "holds", si: "holds", po: "fails" },
});

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  try {
    if (request.op !== "allocate") throw new Error(`cannot answer ${request.op}`);
    say({ id: request.id, tasks: equalSplit(request.instance) });
  } catch (err) {
    say({ id: request.id, error: String(err && err.message || err) });
  }
}).on("close", () => process.exit(0));  // mechverify closed our input: done

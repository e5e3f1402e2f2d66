"""The cost of a policy in another language (``exec:COMMAND ARGS``, docs/exec-protocol.md) per call.

The same trivial policy -- every entry of the task matrix 0 -- called ``--calls`` times on one instance
(examples/000-fig1.json, or ``--instance``) through ``Mechanism.__call__`` (setting check, the call, the
output check), five ways, best of ``--repeat`` passes each:

* ``python in-process``: a Python function in the verifier's own process (``MECHVERIFY_IN_PROCESS=1``): the
  baseline, no isolation at all;
* ``python worker``: the same Python function in its worker process (``mechverify.isolation``, the default
  for a user's function);
* ``exec python``, ``exec node``, ``exec java``: the policy as a program speaking the exec protocol in the
  worker process (the instance written as a JSON line, the answer read, validated against the schema and
  checked as a Python function's); each only where its interpreter (java: and javac) is installed.

Target (issue "Policies in any language"): at least 1,000 calls/s over the protocol.

    python benchmarks/exec_protocol.py [--calls 3000] [--repeat 3] [--instance examples/000-fig1.json]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 1000.0

HELLO = '{"protocol":"mechverify-exec","version":1,"name":"zeros-%s","provides":["allocate"]}'
PROGRAMS = {
    "python": ("zeros.py", f"""import json, sys
print('{HELLO % 'py'}', flush=True)
for line in sys.stdin:
    r = json.loads(line)
    rows = [[0] * len(r["instance"]["servers"]) for _ in r["instance"]["users"]]
    sys.stdout.write(json.dumps({{"id": r["id"], "tasks": rows}}) + "\\n")
    sys.stdout.flush()
"""),
    "node": ("zeros.js", f"""const rl = require("readline").createInterface({{input: process.stdin}});
process.stdout.write('{HELLO % 'js'}\\n');
rl.on("line", (line) => {{
  const r = JSON.parse(line);
  const rows = r.instance.users.map(() => r.instance.servers.map(() => 0));
  process.stdout.write(JSON.stringify({{id: r.id, tasks: rows}}) + "\\n");
}});
"""),
    "java": ("Zeros.java", """import java.io.*;
public final class Zeros {
    public static void main(String[] a) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        out.println("%s");
        out.flush();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            // the id, the number of users and of servers: enough of the request for an all-zero answer
            int i = line.indexOf("\\"id\\":") + 5, j = i;
            while (Character.isDigit(line.charAt(j))) j++;
            int servers = count(line, "\\"servers\\":", "\\"capacity\\""), users = count(line, "\\"users\\":", "\\"demand\\"");
            StringBuilder row = new StringBuilder("[");
            for (int s = 0; s < servers; s++) row.append(s > 0 ? ",0" : "0");
            row.append("]");
            StringBuilder b = new StringBuilder("{\\"id\\":").append(line, i, j).append(",\\"tasks\\":[");
            for (int u = 0; u < users; u++) b.append(u > 0 ? "," : "").append(row);
            out.println(b.append("]}"));
            out.flush();
        }
    }
    static int count(String s, String from, String key) {
        int n = 0, k = s.indexOf(from);
        int end = from.contains("servers") ? s.indexOf("\\"users\\":") : s.length();
        if (end < k) end = s.length();
        for (k = s.indexOf(key, k); k >= 0 && k < end; k = s.indexOf(key, k + 1)) n++;
        return n;
    }
}
""".replace("%s", (HELLO % "java").replace('"', '\\"'))),
}


def zeros(env):
    """The trivial policy in Python: every entry of the task matrix 0."""
    return [[0] * env.n_servers for _ in range(env.n_users)]


def commands(folder: str) -> dict[str, str]:
    """``exec:`` references of the trivial programs whose toolchain is installed, written into ``folder``."""
    out = {}
    for lang, (file, text) in PROGRAMS.items():
        path = os.path.join(folder, file)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        if lang == "python":
            out[lang] = f"exec:{sys.executable} {path}"
        elif lang == "node" and shutil.which("node"):
            out[lang] = f"exec:node {path}"
        elif lang == "java" and shutil.which("javac") and shutil.which("java"):
            subprocess.run(["javac", "-d", folder, path], check=True)
            out[lang] = f"exec:java -cp {folder} Zeros"
    return out


def one_pass(mech, env, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        mech(env)
    return calls / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--instance", default=os.path.join(ROOT, "examples", "000-fig1.json"))
    args = ap.parse_args()
    import mechverify as mv
    from mechanisms import get
    from mechanisms.core.references import from_function

    env = mv.load(args.instance)
    with tempfile.TemporaryDirectory(prefix="mechverify-exec-bench-") as folder:
        ways = [("python in-process", from_function(zeros), True), ("python worker", from_function(zeros), False)]
        ways += [(f"exec {lang}", get(ref), False) for lang, ref in commands(folder).items()]
        best = {}
        for _ in range(args.repeat):
            for label, mech, in_process in ways:
                os.environ["MECHVERIFY_IN_PROCESS"] = "1" if in_process else ""
                mech(env)  # warm up: the fork, the program's start-up
                best[label] = max(best.get(label, 0.0), one_pass(mech, env, args.calls))
        os.environ["MECHVERIFY_IN_PROCESS"] = ""
    base = best["python in-process"]
    print(f"{env.n_users} users x {env.n_servers} servers x {env.n_resources} resources, {args.calls} calls, "
          f"best of {args.repeat}")
    print(f"{'way':<18} {'calls/s':>9} {'us/call':>8} {'vs in-process':>14}")
    for label, _, _ in ways:
        print(f"{label:<18} {best[label]:>9.0f} {1e6 / best[label]:>8.0f} {base / best[label]:>13.1f}x")
    slowest = min(v for k, v in best.items() if k.startswith("exec"))
    print(f"slowest over the protocol: {slowest:.0f} calls/s (target >= {TARGET:.0f}): "
          f"{'met' if slowest >= TARGET else 'NOT met'}")
    return 0 if slowest >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

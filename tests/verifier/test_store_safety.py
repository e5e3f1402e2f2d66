"""The store stays small and safe: one counterexample per cell (the smallest), --keep-all keeps every one,
two processes writing one store at once, replay goes on past a bad file."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from mechanisms import get
from verifier.seeds import all_cases, derive
from verifier.store import find_files, persist, replay, size_key

from tests.helpers import ROOT


def _bf_certs():
    """C-DRFH per-server BF violated on 000 Fig. 1 (2 users) and on 002 Fig. 1 weighted (3 users): one
    cell, two sizes (both re-derived exactly by the seeds' tests)."""
    cases = [c for c in all_cases() if c.mechanism == "c-drfh" and c.property == "bf"]
    small = derive(next(c for c in cases if "000-fig1" in c.instance))
    large = derive(next(c for c in cases if "002-fig1" in c.instance))
    assert small.witness.env.n_users == 2 and large.witness.env.n_users == 3
    return small, large


def test_one_counterexample_per_cell_the_smallest(tmp_path):
    small, large = _bf_certs()
    mech, root = get("c-drfh"), str(tmp_path)
    first = persist(large, mech, provenance={"kind": "test"}, root=root, minimise=False)
    assert first.new
    again = persist(large, mech, provenance={"kind": "test"}, root=root, minimise=False)
    assert again.path == first.path and not again.new  # idempotent
    smaller = persist(small, mech, provenance={"kind": "test"}, root=root, minimise=False)
    assert smaller.new and not os.path.exists(first.path)  # the larger one is superseded
    back = persist(large, mech, provenance={"kind": "test"}, root=root, minimise=False)
    assert not back.new and back.path == smaller.path  # a larger one is not stored...
    assert back.certificate.witness.env.n_users == 2  # ...and the stored one is what the caller gets
    assert len(find_files([root])) == 1 and replay(smaller.path).ok
    # a paper's instance (kind 'seed') is kept beside what searches found; --keep-all keeps every one
    seed = persist(large, mech, provenance={"kind": "seed"}, root=root, minimise=False)
    assert seed.new and len(find_files([root])) == 2
    other = str(tmp_path / "keep-all")
    for cert in (large, small):
        persist(cert, mech, provenance={"kind": "test"}, root=other, minimise=False, keep_all=True)
    assert len(find_files([other])) == 2


def test_size_key_orders_by_shape_first():
    small, large = _bf_certs()
    from verifier.store import certificate_to_dict

    assert size_key(certificate_to_dict(small, {})) < size_key(certificate_to_dict(large, {}))


WRITER = r"""
import sys
from mechanisms import get
from tests.verifier.test_store_safety import _bf_certs
from verifier.store import persist
small, large = _bf_certs()
order = [large, small] if sys.argv[2] == "a" else [small, large]
for _ in range(6):
    for cert in order:
        persist(cert, get("c-drfh"), provenance={"kind": "test"}, root=sys.argv[1], minimise=False)
"""


def test_two_processes_writing_one_store(tmp_path):
    root = str(tmp_path / "store")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, root, tag], cwd=ROOT) for tag in ("a", "b")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    files = find_files([root])
    assert len(files) == 1 and replay(files[0]).ok  # one per cell, the smallest, complete
    with open(files[0]) as fh:
        assert len(json.load(fh)["environment"]["users"]) == 2
    assert not [f for f in os.listdir(os.path.join(root, "c-drfh")) if f.startswith(".tmp")]


def test_replay_goes_on_past_bad_files(tmp_path, cli):
    small, _ = _bf_certs()
    good = persist(small, get("c-drfh"), provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    (tmp_path / "c-drfh" / "broken.json").write_text('{"schema": ')
    (tmp_path / "c-drfh" / "deep.json").write_text("[" * 100000)
    (tmp_path / "c-drfh" / "list.json").write_text("[1, 2]")
    out = cli("replay", str(tmp_path))
    assert out.returncode == 1 and out.stderr == "", out.stderr
    assert f"ok   {good}" in out.stdout and out.stdout.count("FAIL") == 3
    assert out.stdout.strip().splitlines()[-1] == "1 passed, 3 failed"


def test_atomic_write_new_replace_permissions_and_fallback(tmp_path, monkeypatch):
    """A new file, a replaced file and the named-temporary fallback all end with exactly the text
    written, the umask's ordinary permissions (not mkstemp's 0600) and no temporary file; on Linux a
    new file is linked into place from an unnamed one (O_TMPFILE), so a SIGKILL leaves nothing."""
    import verifier.files as st

    umask = os.umask(0)
    os.umask(umask)
    path = tmp_path / "d" / "a.json"
    st.atomic_write_text(str(path), "first\n")
    st.atomic_write_text(str(path), "second é\n")  # replacing an existing file
    assert path.read_text(encoding="utf-8") == "second é\n"
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask
    if hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd"):
        assert st._write_unnamed(str(path.parent), str(tmp_path / "d" / "b.json"), b"x")  # the Linux path
    monkeypatch.setattr(st, "_write_unnamed", lambda *a: False)
    st.atomic_write_text(str(tmp_path / "d" / "c.json"), "third\n")
    assert (tmp_path / "d" / "c.json").read_text() == "third\n"
    assert os.stat(tmp_path / "d" / "c.json").st_mode & 0o777 == 0o666 & ~umask
    assert sorted(os.listdir(tmp_path / "d")) == ["a.json", "b.json", "c.json"]

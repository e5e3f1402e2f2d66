"""The report renderers: every format (text, Markdown, JSON, HTML, LaTeX) for a check, a run and an audit
result; terminal width and colour; float noise; the seed-code legend; HTML links and exact numbers."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlparse

import pytest

import mechanisms
from mechverify.instances import load_environment
from verifier.audit import run_audit
from verifier.check import check_instance
from verifier.report import (audit_to_json, check_line, check_result_to_json, expand_codes, measure_text,
                             render_audit_html, render_audit_latex, render_audit_markdown, render_html,
                             render_markdown, render_table, report_to_json, seed_legend, summarise_allocation,
                             verdict_words, write_audit, write_reports)
from verifier.report.html import counterexample_section, view_from_certificate, view_from_file
from verifier.results import Result
from verifier.run import run_mechanism
from tests.helpers import ROOT
from verifier.config import RunConfig

LONG_FLOAT = re.compile(r"\d\.\d{5,}")
ANSI = re.compile(r"\033\[[0-9;]*m")


class _Page(HTMLParser):
    """Collects links, anchors and tag balance of an HTML page."""

    VOID = {"meta", "br", "line", "rect", "img", "hr", "input", "link"}

    def __init__(self):
        super().__init__()
        self.hrefs, self.ids, self.stack, self.errors, self.text = [], set(), [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "href" in a:
            self.hrefs.append(a["href"])
        if "id" in a:
            self.ids.add(a["id"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _check_page(path: str) -> _Page:
    with open(path, encoding="utf-8") as fh:
        page = _Page()
        page.feed(fh.read())
    assert not page.errors and not page.stack, (page.errors, page.stack)
    base = os.path.dirname(path)
    for h in page.hrefs:
        u = urlparse(h)
        if h.startswith("#"):
            assert h[1:] in page.ids, f"dangling anchor {h}"
        elif not u.scheme:
            assert os.path.exists(os.path.join(base, unquote(u.path))), f"broken link {h}"
    return page


def _visible_numbers_ok(html_text: str) -> None:
    """No number in the page is printed as a long float (the embedded JSON <pre> included)."""
    assert not LONG_FLOAT.findall(html_text), LONG_FLOAT.findall(html_text)[:5]


@pytest.fixture(scope="module")
def run_report(tmp_path_factory):
    store = tmp_path_factory.mktemp("ce")
    rep = run_mechanism(mechanisms.get("per-server-drf"), ["po", "srf"], RunConfig(budget=20, seed=0, store=str(store), trials=300))
    return rep


@pytest.fixture(scope="module")
def audit_result(tmp_path_factory):
    store = tmp_path_factory.mktemp("audit-ce")
    return run_audit(RunConfig(budget=4, seed=0, store=str(store)), only=["c-drfh"])


# ---------------------------------------------------------------------- run
def test_run_every_format(run_report, tmp_path):
    rep = run_report
    po = next(r for r in rep.results if r.property == "po")
    assert po.verdict == "violated" and po.counterexample
    plain = render_table(rep)
    assert "po/fractional" in plain and "confirmed" in plain and not ANSI.search(plain)
    assert "sources: 001 = Wang, Liang & Li, DRFH" in plain  # the codes are expanded in a legend
    for width in (60, 80, 100):
        narrow = render_table(rep, width=width)
        assert max(len(ln) for ln in narrow.splitlines()) <= width, width
        if len(po.counterexample) + 20 <= width:
            assert po.counterexample in narrow  # the path stays whole on its own line
        for r in rep.results:  # property/variant names are never cut mid-word
            assert any(ln.startswith(f"{r.property}/{r.variant} ") for ln in narrow.splitlines()), (width, r.variant)
    coloured = render_table(rep, width=100, color=True)
    assert ANSI.search(coloured) and ANSI.sub("", coloured) == render_table(rep, width=100)
    md = render_markdown(rep)
    assert "| po/fractional |" in md and "Sources: **001** = Wang, Liang, Li" in md
    data = report_to_json(rep)
    assert data["schema"] == "mechverify.run/1" and data["results"][0]["counterexample"] == po.counterexample

    paths = write_reports(rep, str(tmp_path / "rep"))
    html_files = [p for p in paths if p.endswith(".html")]
    assert len(html_files) == 1
    page = _check_page(html_files[0])
    text = open(html_files[0], encoding="utf-8").read()
    _visible_numbers_ok(text)
    assert any(h.startswith("counterexamples/") for h in page.hrefs)
    assert "Capacities c[s, r]" in text and "true tasks" in text and "<svg" in text
    assert "Measures" in text and "domination factor" in text and "violated when &gt; 1" in text
    assert "Wang, Liang, Li, &quot;Multi-Resource" in text  # full citation in the legend
    # the allocations' exact numbers are in the page
    cert = po.certificate
    for a in cert.allocations.values():
        for row in a.x:
            for v in row:
                from mechverify.numbers import fmt_exact
                assert f">{fmt_exact(v)}<" in text


def test_run_html_without_a_store(tmp_path):
    rep = run_mechanism(mechanisms.get("per-server-drf"), ["po"], RunConfig(budget=10, seed=0, store=None, trials=300))
    assert rep.results[0].verdict == "violated" and rep.results[0].counterexample is None
    out = render_html(rep)
    assert "Allocations" in out and "counterexamples/" not in out


def test_columns_env_limits_the_run_table(tmp_path):
    env = dict(os.environ, COLUMNS="72")
    out = subprocess.run([sys.executable, "-m", "verifier", "run", "tsf", "--properties", "bf,srf", "--trials", "200",
                          "--budget", "20", "--store", str(tmp_path / "ce"), "--quiet"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert max(len(ln) for ln in out.stdout.splitlines()) <= 72
    assert "\033[" not in out.stdout  # not a TTY: no colour


# ---------------------------------------------------------------------- noise, legend, allocations
def test_float_noise_prints_as_the_threshold_with_the_tolerance():
    r = Result("tsf-er", "sp", "demand", verdict="not_refuted", measure=2.24506e-09, trials=10, seconds=1.0)
    # the search's float tolerance (mechverify.numbers.FLOAT_REL = 1e-7), named so it is not read as --tolerance
    assert "worst measure 0 (float noise within the search's tolerance 1e-7)" in verdict_words(r)
    assert "e-09" not in verdict_words(r)
    assert measure_text("ef", 1.00000000003).startswith("1 (float noise within the search's tolerance 1e-7)")
    assert measure_text("sp", 0.25) == "0.25" and measure_text("si", __import__("fractions").Fraction(2, 3)) == "2/3"


def test_seed_codes_expanded():
    assert [c for c, _ in seed_legend()] == ["000", "001", "002", "003", "004"]
    assert expand_codes("holds [004 Table 2 / Thm 7]") == \
        "holds [004 (Meskar & Liang, TSF-ER (external resource type)) Table 2 / Thm 7]"
    assert expand_codes("000/002 Table I").startswith("000 (Khamse-Ashari")


def test_summarise_allocation_of_a_large_cluster():
    from mechanisms import allocate

    env = load_environment(os.path.join(ROOT, "examples", "002-fig5-cluster.json"))
    alloc = allocate(mechanisms.get("tsf"), env, exact=False)
    short = summarise_allocation(alloc, width=100)
    assert max(len(ln) for ln in short.splitlines()) <= 100 and "--full" in short and "top 4 users" in short
    full = summarise_allocation(alloc, full=True)
    assert len(full.splitlines()) == env.n_users + 2


# ---------------------------------------------------------------------- check
def test_check_every_format():
    mech = mechanisms.get("per-server-drf")
    env = load_environment(os.path.join(ROOT, "examples", "001-fig1.json"))
    results = check_instance(mech, env, ["po", "ef"], RunConfig(budget=5))
    po = next(r for r in results if r.property == "po")
    assert po.verdict == "violated"
    for r in results:
        assert check_line(r).startswith(f"{r.property}/{r.variant}") and "\n" not in check_line(r)
        assert max(len(ln) for ln in check_line(r, width=70).splitlines()) <= 70
        json.dumps(check_result_to_json(r))
    sec = counterexample_section(view_from_certificate(po.certificate), "ce-1", "check")
    _visible_numbers_ok(sec)
    assert "<svg" in sec and "Users (true data)" in sec


# ---------------------------------------------------------------------- audit
def _latex_structure_ok(tex: str) -> None:
    assert tex.isascii()
    stack = []
    for m in re.finditer(r"\\(begin|end)\{(\w+)\}", tex):
        if m.group(1) == "begin":
            stack.append(m.group(2))
        else:
            assert stack and stack.pop() == m.group(2), m.group(0)
    assert not stack
    for block in re.findall(r"\\begin\{tabular\}\{([^}]*)\}(.*?)\\end\{tabular\}", tex, re.S):
        ncols = len(block[0].replace("|", ""))
        for row in block[1].split("\\\\"):
            row = row.replace("\\hline", "").strip()
            if row:
                assert len(re.findall(r"(?<!\\)&", row)) == ncols - 1, row
    body = "\n".join(ln for ln in tex.splitlines() if not ln.startswith("%"))
    assert not re.search(r"(?<!\\)[_#%]", body)  # escaped
    assert body.count("{") == body.count("}")


def test_audit_every_format(audit_result, tmp_path):
    res = audit_result
    md = render_audit_markdown(res)
    assert "## 000/002 Table I" in md and "Sources: **000** = J. Khamse-Ashari et al." in md
    json.dumps(audit_to_json(res))
    tex = render_audit_latex(res)
    _latex_structure_ok(tex)
    assert r"\begin{tabular}{l|c}" in tex and "C-DRFH" in tex and r"\checkmark" in tex
    paths = write_audit(res, str(tmp_path / "aud"))
    assert {os.path.basename(p) for p in paths} >= {"audit.md", "audit.json", "audit.html", "audit.tex"}
    page = _check_page(str(tmp_path / "aud" / "audit.html"))
    text = open(tmp_path / "aud" / "audit.html", encoding="utf-8").read()
    _visible_numbers_ok(text)
    violated = [e for c in res["cells"] for e in c.evidence if e.verdict == "violated"]
    assert violated and "Capacities c[s, r]" in text and any(h.startswith("#ace-") for h in page.hrefs)
    assert render_audit_html(res).count("<section class='ce'") == len({e.counterexample for e in violated})


def test_view_from_file_rebuilds_exact_allocations():
    d = os.path.join(ROOT, "counterexamples", "c-drfh")
    path = os.path.join(d, sorted(f for f in os.listdir(d) if f.endswith(".json"))[0])
    v = view_from_file(path)
    assert v is not None and v.allocations and all(a.exact for a in v.allocations.values())
    stored = json.load(open(path))
    for name, a in v.allocations.items():
        assert [[str(x) for x in row] for row in a.x] == stored["allocations"][name]["tasks"]


def test_audit_cli_writes_html_and_prints_latex(tmp_path):
    out = subprocess.run([sys.executable, "-m", "verifier", "audit", "--mechanisms", "c-drfh", "--budget", "2",
                          "--store", str(tmp_path / "ce"), "--out", str(tmp_path / "aud"), "--format", "latex",
                          "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    _latex_structure_ok(out.stdout)
    assert out.stdout.count(r"\begin{table}") == out.stdout.count(r"\end{table}") >= 1
    _check_page(str(tmp_path / "aud" / "audit.html"))
    assert (tmp_path / "aud" / "audit.tex").read_text() == out.stdout


# ---------------------------------------------------------------------- a user's claims, runs, plurals
def _user_report(results, user=True):
    from verifier.run import RunReport

    return RunReport("mine", "my mechanism", "many servers, RDM", 0, 5.0, {
        "users": [1, 3], "servers": [1, 3], "resources": [1, 3], "external": [0, 0], "numbers": "p/q",
        "features": {}}, results, [], user=user)


def _refuted_ef(source):
    from mechanisms.core.registry import Claim

    r = Result("mine", "ef", "placement-aware", claims=[Claim("ef", "holds", source)], verdict="violated",
               counterexample="ce/mine/ef-1.json")
    r.outcomes = ["REFUTED"]
    return r


@pytest.mark.parametrize("width", [None, 100, 50])
def test_a_users_claims_are_claimed_with_their_source_not_a_papers(width):
    rep = _user_report([_refuted_ef("my notes, Thm 1")])
    text = " ".join(render_table(rep, width=width).split())  # unwrapped
    assert "paper" not in text and "claimed to hold [my notes, Thm 1]" in text
    md, page = render_markdown(rep), render_html(rep)
    assert "claimed to hold [my notes, Thm 1]" in md and "paper claims" not in md and "paper [" not in md
    assert "claimed" in page and "my notes, Thm 1" in page and "<th>paper claims</th>" not in page
    assert "(paper:" not in page
    # a registered mechanism's claims stay its paper's
    paper = " ".join(render_table(_user_report([_refuted_ef("004 Thm 6")], user=False), width=width).split())
    assert "paper [004 Thm 6] says it holds" in paper


def test_a_runs_finding_is_the_last_line_not_no_claim_refuted():
    crash = Result("mine", "runs", "any", verdict="violated", counterexample="ce/mine/runs-1.json")
    ok = Result("mine", "ef", "placement-aware", verdict="not_refuted", trials=3, seconds=0.1, measure=1)
    rep = _user_report([crash, ok])
    for width in (None, 100):
        text = render_table(rep, width=width)
        last = " ".join(text.split("\n\n")[-1].split())  # the closing paragraph, unwrapped
        assert last.startswith("THE MECHANISM FAILED") and "runs/any violated (counterexample ce/mine/runs-1.json)" \
            in last and last.endswith("no claim was refuted in this run"), text
        assert "no claim of the paper" not in text
    assert render_markdown(rep).splitlines()[-1].startswith("THE MECHANISM FAILED")
    assert "THE MECHANISM FAILED" in render_html(rep)


def test_counts_of_one_are_singular():
    from fractions import Fraction as F

    from mechanisms import allocate
    from mechverify.instances import parse_environment
    from mechverify.numbers import plural

    assert [plural(n, "task") for n in (0, 1, F(1), "1", F(1, 2), 2, "[1, 2]")] == \
        ["tasks", "task", "task", "task", "tasks", "tasks", "tasks"]
    # one server of capacity 1, three users demanding 1 each: DRF equalises dominant shares, 1/3 each,
    # so 1 task in total, 3 users get tasks, 1 server is used
    env = parse_environment({"resources": ["cpu"], "servers": [{"capacity": [1]}],
                             "users": [{"demand": [1]}, {"demand": [1]}, {"demand": [1]}]})
    alloc = allocate(mechanisms.get("drf"), env, exact=True)
    text = summarise_allocation(alloc, top=1)  # 3 users > 2 * top: the summary layout
    assert "3 users x 1 server; 1 task in total; 3 users get tasks, 1 server is used" in text, text

"""The timeline of a trace counterexample (verifier.report.timeline): drawn from an exact re-run, its failing
step shaded over exactly [t, until), in the run's HTML page and in ``execute --html``; a one-shot
counterexample's page has none."""
from __future__ import annotations

import os
from fractions import Fraction

import pytest

import mechanisms
from mechverify.execution import load_execution
from verifier.config import RunConfig
from verifier.execute import execute_trace
from verifier.report.html import counterexample_section, view_from_certificate
from verifier.report.pages import render_execution_html
from verifier.report.timeline import dominant_shares, draw, timeline, timeline_of_witness, to_png, to_svg
from tests.helpers import ROOT, main_cli

TRACE = os.path.join(ROOT, "examples", "traces", "drf-arrivals.json")


@pytest.fixture(scope="module")
def report():
    mech = mechanisms.get("drf+irrevocable")
    return execute_trace(mech, load_execution(TRACE), ["each-step"], RunConfig(budget=20).start())


def _si(rep):
    r = next(r for r in rep.results if (r.property, r.variant) == ("each-step", "si"))
    assert r.certificate is not None and r.certificate.witness.execution is not None
    return r


def _span_x(artist) -> tuple[float, float]:
    xs = [x for x, _ in artist.get_patch_transform().transform(artist.get_path().vertices)] \
        if hasattr(artist, "get_patch_transform") else list(artist.get_xdata())
    return min(xs), max(xs)


def test_failing_step_is_shaded_over_its_time_span(report):
    r = _si(report)
    w = r.certificate.witness
    st = report.steps[w.step]
    tl = timeline_of_witness(mechanisms.get("drf+irrevocable"), w)
    assert tl.highlight == (w.step, float(st.t), float(st.until)) == (1, 10.0, 20.0)
    fig = draw(tl)
    try:
        spans = [a for a in fig.axes[0].patches if a.get_gid() == "failing-step"]
        assert len(spans) == 1 and _span_x(spans[0]) == (10.0, 20.0)
        events = [a for a in fig.axes[0].lines if a.get_gid() == "event"]
        assert sorted(a.get_xdata()[0] for a in events) == [10.0, 20.0, 30.0]
        assert {a.get_gid() for a in fig.axes[0].lines} >= {"share-A", "share-B", "share-C"}
        assert fig.axes[0].get_xlabel() == "time (s)"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    # the shares are exact before they are drawn: A holds 9/2 tasks of (1, 4) on (9, 18): mem 18/18
    assert dominant_shares(report.steps[0]) == {"A": Fraction(1)}
    assert dict((s.name, s.segments) for s in tl.series)["C"] == ((20.0, 30.0, 0.0), (30.0, 40.0, 0.5))


def test_figure_is_deterministic(report):
    tl = timeline(report.execution, report.steps, 1)
    svg = to_svg(tl)
    assert svg.startswith("<svg") and svg == to_svg(tl) and "<dc:date>" not in svg
    assert "failing-step" in svg and "arrive B" in svg
    png = to_png(tl)
    assert png.startswith(b"\x89PNG") and png == to_png(tl)


def test_run_page_draws_the_timeline_and_one_shot_page_does_not(report):
    r = _si(report)
    page = counterexample_section(view_from_certificate(r.certificate, None, "drf+irrevocable"), "ce-1", "x")
    assert page.count("<figure class='timeline'>") == 1 and "The failing step 1, [10, 20), is shaded." in page
    assert "<tr class='violated'><td>1</td><td>[10, 20)</td>" in page
    from mechverify.instances import load_environment
    from verifier.check import check_instance

    env = load_environment(os.path.join(ROOT, "examples", "001-fig1.json"))
    results = check_instance(mechanisms.get("per-server-drf"), env, ["po"], RunConfig(budget=5))
    po = next(x for x in results if x.certificate is not None)
    html = counterexample_section(view_from_certificate(po.certificate), "ce-1", "x")
    assert "<h4>Instance</h4>" in html and "timeline" not in html and "<h4>Execution</h4>" not in html


def test_execute_html_page(report, tmp_path):
    page = render_execution_html(report, TRACE)
    assert page.count("<figure class='timeline'>") == 1
    caption = page.split("Step 1, [10, 20), shaded: ", 1)[1].split(" violated.", 1)[0]
    assert "each-step/si" in caption.split(", ")  # with every other one-shot property failing there too
    out = tmp_path / "run.html"
    code, _, err = main_cli("execute", "drf", TRACE, "--lift", "irrevocable", "--properties", "each-step",
                            "--budget", "20", "--html", str(out))
    assert code == 1 and out.exists() and f"wrote {out}" in err
    text = out.read_text(encoding="utf-8")
    assert "<svg class='timeline'" in text and "<h2>Steps</h2>" in text and "each-step/si" in text


def test_trace_misreport_is_drawn_dashed_and_tabled():
    from verifier.properties import get_property
    from verifier.store import witness_from

    mech = mechanisms.get("drf+irrevocable")
    d = {"mechanism": mech.name, "property": "online-sp", "variant": "demand", "users": ["u2"], "step": None,
         "environment": {"resources": ["r1"], "servers": [{"name": "s1", "capacity": ["4"]}],
                         "users": [{"name": "u1", "demand": ["2"]}, {"name": "u2", "demand": ["4"]}],
                         "unit": "s", "end": "3", "events": [{"t": "2", "kind": "demand", "user": "u2", "demand": ["2"]}]},
         "deviation": {"kind": "trace-misreport", "user": "u2", "reports": {"events[0]": {"demand": ["4"]}}}}
    cert = get_property("online-sp").recheck(mech, witness_from(d))
    assert cert is not None
    tl = timeline_of_witness(mech, cert.witness)
    dashed = [s for s in tl.series if s.dashed]
    assert tl.highlight is None and [s.name for s in dashed] == ["u2"]
    assert dashed[0].segments == ((0.0, 2.0, 0.5), (2.0, 3.0, 0.5))  # truthful: 1/4 after t = 2
    html = counterexample_section(view_from_certificate(cert, None, mech.name), "ce-1", "x")
    assert "u2, misreporting" in html and "Deviation (misreport over the trace" in html and "events[0]" in html

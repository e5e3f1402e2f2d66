"""The generic repeated-state detector (src/mechverify/cycles.py)."""
from __future__ import annotations

from mechverify.cycles import Loop, RepeatDetector, first_loop


def test_first_repeat_and_what_happened_in_between():
    # states a b c b: the loop is b -> c -> b, entered by "x" and "y"
    loop = first_loop([("a", None), ("b", "p"), ("c", "x"), ("b", "y"), ("c", "z")], count=lambda h: h == "y")
    assert loop == Loop(1, 3, "b", ("x", "y"), 1) and loop.length == 2


def test_no_repeat_and_max_steps():
    assert first_loop([(k, None) for k in range(10)]) is None
    assert first_loop([("a", None), ("b", 1), ("a", 2)], max_steps=2) is None
    det = RepeatDetector(max_steps=3)
    for k in range(3):
        assert det.see(k) is None
    assert det.full


def test_forget_drops_earlier_states_but_keeps_counting():
    det = RepeatDetector()
    det.see("a"), det.see("b", 1)
    det.forget()  # the input changed
    assert det.see("a", 2) is None  # not a repeat: "a" was seen before the change
    loop = det.see("a", 3)
    assert (loop.start, loop.end, loop.between, loop.counted) == (2, 3, (3,), 1)


def test_window_bounds_memory():
    states = [("a", 0), ("b", 1), ("c", 2), ("a", 3)]
    assert first_loop(states, window=2) is None  # a loop of 3 steps is longer than the window
    assert first_loop(states, window=3).between == (1, 2, 3)
    det = RepeatDetector(window=1)
    assert det.see("a") is None and det.see("a", "x").between == ("x",)  # a fixed point fits any window

"""User mechanisms that misbehave the way real code does (tests/verifier/test_hostile_mechanisms.py).

Every one is a finding about the mechanism (property ``runs``) or a one-line error -- never a hang, a
traceback, a corrupted JSON output or the verifier's own exit.
"""
import os
import sys
import time


def _zeros(env):
    return [[0] * env.n_servers for _ in env.users]


def loops(env):
    while True:
        pass


def sleeps(env):
    time.sleep(10)
    return _zeros(env)


def returns_none(env):
    return None


def huge(env):
    return [[10 ** 400] * env.n_servers for _ in env.users]


def float_overflow(env):
    return [[1e308 * 10] * env.n_servers for _ in env.users]


def huge_denominator(env):
    from fractions import Fraction

    return [[Fraction(1, 10 ** 2000)] * env.n_servers for _ in env.users]


def prints(env):
    print("hello from the mechanism")
    print("and on stderr", file=sys.stderr)
    return _zeros(env)


def prints_then_raises(env):
    print("about to fail")
    raise RuntimeError("boom")


def exits(env):
    sys.exit(3)


def hard_exit(env):
    os._exit(7)


def segfault(env):
    import ctypes

    ctypes.string_at(0)


def memory_hog(env):
    blocks = []
    while True:
        blocks.append(bytearray(256 << 20))


def unsendable(env):
    return [[(lambda: 0) for _ in range(env.n_servers)] for _ in env.users]


def sometimes(env):
    """Raises only when the second user demands more of the first resource than the first user."""
    if env.n_users >= 2 and env.demand[1][0] > env.demand[0][0]:
        raise ValueError("second user demands more")
    return _zeros(env)

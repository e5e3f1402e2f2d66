"""Work done over a run's steps (``mechverify.execution``): a user with work left does it at its rate -- its
true utility in the step (the tasks it runs, ``mechverify.utility``) -- and finishes when it is done.

:class:`Progress` holds one step's rates: :meth:`Progress.finish` says who finishes first and when (the run
ends the step there), :meth:`Progress.advance` takes the work done over the step off.  In exact runs every
number is exact, one user at a time; in float runs (the screen) the step's utilities come from
``utility.utilities`` (computed once per allocation and true environment, shared with whoever else reads
them) and, from ``allocation.VECTOR_MIN`` users on, the arithmetic runs over numpy arrays -- the same IEEE
operations, in the same order, as the loop of ``float`` ones (tests/mechverify/test_execution_fast.py holds
them equal).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from . import allocation as _allocation
from .allocation import Allocation
from .model import Environment
from .numbers import as_float
from .utility import Reuse, utilities, utility, utility_floats

__all__ = ["Progress"]


class Progress:
    """The rates of work of the users present in one step (those with work left: ``work``, name -> work),
    ``tru`` the true environment, ``alloc`` the allocation, ``reuse`` the run's ``utility.Reuse``
    (float runs: a user whose inputs did not change since the last step is not computed again)."""

    def __init__(self, users: Sequence[str], work: dict, tru: Environment, alloc: Allocation, exact: bool,
                 reuse: Optional["Reuse"] = None) -> None:
        self.work, self.exact = work, exact
        self.names = list(filter(work.__contains__, users))
        self.loop = exact or len(self.names) < _allocation.VECTOR_MIN  # a few users: one at a time (numpy costs more)
        if self.loop:
            us = utilities(tru, alloc, reuse=reuse) if not exact else None
            self.rates = [utility(tru, alloc, j) if exact else us[j] for j, u in enumerate(users) if u in work]
            return
        import numpy as np

        # float(Fraction) and as_float give the same correctly rounded n / d
        if len(self.names) != len(users):
            us = utilities(tru, alloc, reuse=reuse)
            self.rates = np.array([us[j] for j, u in enumerate(users) if u in work], dtype=float)
        else:  # everyone: the array memoised with the utilities (read-only here)
            self.rates = utility_floats(tru, alloc, reuse=reuse)
        self.left = np.array(list(map(work.__getitem__, self.names)), dtype=float)

    def finish(self, t: Any) -> tuple[Optional[Any], Optional[str]]:
        """``(time, user)`` of the first finish if nothing else happens (``(None, None)``: nobody finishes):
        the earliest ``t + work / rate`` over the users with a positive rate (the first of equal ones), unless
        a user with no work left and no rate finishes at once (the last such)."""
        if self.loop:
            finish_at, who = None, None
            exact = self.exact
            for u, rate in zip(self.names, self.rates):
                w = self.work[u]
                if rate > 0:
                    at = t + (w / rate if exact else as_float(w) / as_float(rate))
                    if finish_at is None or at < finish_at:
                        finish_at, who = at, u
                elif w == 0:
                    finish_at, who = t, u
            return finish_at, who
        pos = self.rates > 0
        done = (~pos & (self.left == 0)).nonzero()[0]  # (np.flatnonzero of a 1-d array, without its wrapper)
        if len(done):
            return t, self.names[int(done[-1])]
        idx = pos.nonzero()[0]
        if not len(idx):
            return None, None
        at = t + self.left[idx] / self.rates[idx]
        k = int(at.argmin())  # the first of the smallest
        return float(at[k]), self.names[int(idx[k])]

    def advance(self, dt: Any) -> None:
        """Take the work done in ``dt`` off every user's work left (never below 0)."""
        work = self.work
        if self.loop:
            zero = 0 if self.exact else 0.0
            for u, rate in zip(self.names, self.rates):
                done = rate * dt
                work[u] = max(work[u] - (done if self.exact else as_float(done)), zero)
            return
        import numpy as np

        v = self.left - self.rates * dt
        work.update(zip(self.names, np.where(0.0 > v, 0.0, v).tolist()))  # max(v, 0.0): v unless 0.0 > v

"""Kueue's fair sharing, ported: ``kueue-drs`` and its historic versions (``port.py``: the declaration; ``drs.py``,
``cohort.py``, ``tournament.py``, ``order.py``: its parts), and Kueue's preemption model -- the preemption step
(``preemption.py``), the queue manager and scheduling cycle (``scheduling.py``) and the bounded search for
preemption loops (``cycles.py``, run by ``python -m verifier.preemption_cycles``)."""

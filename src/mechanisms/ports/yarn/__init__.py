"""YARN's schedulers, ported: the FairScheduler's DRF policy (``drf_policy.py``: upstream's comparator; ``drf.py``:
``yarn-drf`` and ``yarn-drf@YARN-11482``) and the CapacityScheduler's queue order (``capacity.py``:
``yarn-capacity`` and ``yarn-capacity@YARN-11745``), and the FairScheduler over time with its starvation
clocks and preemption (``preempt.py``: ``yarn-drf-preempt``; its arithmetic in ``preempt_calc.py``, its fast step
in ``preempt_fast.py``, its step in integers where the numbers are whole in ``preempt_whole.py`` with its
arithmetic in ``preempt_whole_calc.py``)."""

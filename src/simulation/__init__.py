"""Simulations and evaluation metrics built on the model and the mechanisms (seed 004 Sec. 6).

``metrics``: SI-SAT, EF-SAT, domination factor, JCT factor, utilisation of any allocation.
``tsf_er_online``: the event simulator of online TSF-ER (Algorithm 2).
``psdsf_distributed``: trajectories of distributed PS-DSF under server schedules (seeds 000/002 Sec. III-D).
Nothing in ``mechverify`` or ``mechanisms`` imports this package.
"""

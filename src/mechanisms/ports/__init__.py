"""Production schedulers' policies, ported (our code, following upstream's semantics at a pinned commit):
Mesos' DRF sorter (``mesos.py``), Volcano's hierarchical DRF (``volcano/``), Kueue's fair sharing and its
preemption model (``kueue/``), YARN's FairScheduler DRF and CapacityScheduler queue order (``yarn/``) and
Armada's DRF queue order (``armada.py``).  ``mechanisms/__init__.py`` imports the registering modules."""

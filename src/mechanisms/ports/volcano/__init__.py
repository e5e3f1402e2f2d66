"""Volcano's hierarchical DRF, ported: ``volcano-hdrf`` (``port.py``: configuration, conventions, order facet and
declaration; ``tree.py``: the tree, its shares and ``compareQueues``; ``fast.py``: the incremental allocation)."""

"""The plumbing of the mechanisms: what a mechanism is (``mechanism.py``: ``Setting``, ``Claim``, ``OrderSpec``,
``Mechanism``), the registry (``registry.py``: ``register``, ``get``), a user's mechanism by reference or entry
point (``references.py``), the z3 engine's facet (``z3spec.py``) and what order facets read of a state
(``order.py``).  Nothing here is a mechanism; nothing here imports one."""

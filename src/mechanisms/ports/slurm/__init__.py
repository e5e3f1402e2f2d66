"""Slurm's fair-share priority (SchedMD/slurm, priority/multifactor), ported: the two factors on an association
tree (``fairshare.py``), the stateful policies over executions (``policy.py``) and their declarations
(``port.py``: ``slurm-classic``, ``slurm-fairtree``)."""

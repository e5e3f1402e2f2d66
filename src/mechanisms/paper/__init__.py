"""The mechanisms of the seed papers (DRF and its descendants, PS-DSF, LMM-MMS, H-DRF, TSF-ER and its rivals,
seed 001's Slots baseline), each registered with its setting and its paper's claims, and their shared building
blocks: every normaliser (``normalisers.py``), the leximin of normalised task counts (``leximin.py``) and
progressive filling with whole tasks (``filling.py``).  ``psdsf/`` and ``external_resources/`` (seed 004:
mechanisms with external resources) hold one module per algorithm.  ``mechanisms/__init__.py`` imports the
registering modules."""

"""``python -m verifier.preemption_cycles``: the command of the bounded search for preemption loops in Kueue's
fair sharing.  The search, its report and its z3 query live with the Kueue port
(:mod:`mechanisms.ports.kueue.cycles`); this module is only its entry point."""
from __future__ import annotations

import sys

from mechanisms.ports.kueue.cycles import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())

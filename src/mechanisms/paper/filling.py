"""Progressive filling with WHOLE tasks: the one loop behind First-/Best-Fit DRFH and online TSF-ER.

At every step the user with the lowest key among those with a fitting server gets ONE task on the
fitting server with the lowest server key; then the fitting sets are updated (only the chosen server's
resources changed, plus whatever ``user_open`` re-checks).  Remaining capacities only shrink, so a user
that stops fitting never fits again: dropping it at once gives the same placements as re-checking it
when it would be picked.

A caller whose server key changes only at the server just used may pass ``pick_server(j, fs)``, returning
the server of ``fs`` with the lowest key (e.g. from a heap it keeps up to date in ``place``) instead of
``fill_whole_tasks`` scanning ``fs`` with ``server_key``; it must return the same server the scan would.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from mechverify.numbers import InstanceError

__all__ = ["fill_whole_tasks"]


def fill_whole_tasks(fits: dict[int, set[int]], user_key: Callable[[int], Any],
                     server_key: Callable[[int, int], Any], place: Callable[[int, int], None],
                     server_fits: Callable[[int, int], bool], user_open: Callable[[int, int], bool],
                     max_steps: int, too_many: str,
                     pick_server: Optional[Callable[[int, set[int]], int]] = None) -> int:
    """Run the loop on ``fits`` (user -> servers where one task fits now; emptied in place).

    ``place(j, s)`` commits one task of ``j`` on ``s``; ``server_fits(u, s)`` re-checks ``u`` at the
    server just used; ``user_open(u, j)`` says whether ``u`` may still receive tasks after one of
    ``j``'s was placed (task bound, queue, shared external resources).  Raises ``InstanceError`` with
    ``too_many`` beyond ``max_steps`` placements.  Returns the number of placements."""
    steps = 0
    while fits:
        steps += 1
        if steps > max_steps:
            raise InstanceError(too_many)
        j = min(fits, key=user_key)
        m = pick_server(j, fits[j]) if pick_server is not None else min(fits[j], key=lambda s: server_key(j, s))
        place(j, m)
        for u in list(fits):
            fs = fits[u]
            if m in fs and not server_fits(u, m):
                fs.discard(m)
            if not fs or not user_open(u, j):
                del fits[u]
    return steps

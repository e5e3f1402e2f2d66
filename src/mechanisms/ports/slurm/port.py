"""The declarations of ``slurm-classic`` (PriorityFlags=NO_FAIR_TREE) and ``slurm-fairtree`` (the default since
19.05): :mod:`mechanisms.ports.slurm.policy` (the model, its conventions and omissions) on the factors of
:mod:`mechanisms.ports.slurm.fairshare`."""
from __future__ import annotations

from functools import partial

from ...core.z3spec import Z3Spec
from ..declare import Pin, Port
from . import policy

__all__ = ["COMMIT", "CLASSIC", "FAIRTREE"]

_SLURM = "SchedMD/slurm"
COMMIT = "284c3b95f08a2dc2478499837b03355e1b9c5c75"
_MF = "src/plugins/priority/multifactor"
_COMMON = (f"{_SLURM} @ {COMMIT}: doc/html/priority_multifactor.shtml; {_MF}/priority_multifactor.c (decay: "
           f"_init_decay_vars, _decay_thread, _apply_new_usage; set_assoc_usage_norm); src/slurmctld/job_mgr.c "
           f"(calc_job_billable_tres: billing = CPUs)")
_PINS = (Pin(_SLURM, COMMIT, "doc/html/priority_multifactor.shtml"),
         Pin(_SLURM, COMMIT, f"{_MF}/priority_multifactor.c"),
         Pin(_SLURM, COMMIT, "src/slurmctld/job_mgr.c"))
_MODEL = ("accounts = the queue tree (queue weight = raw shares), users = associations (user weight = raw shares), "
          "jobs = whole tasks; usage = CPU-time (billing = the cpu resource's per-task demand, else the first "
          "resource's) x time, decayed at ticks every calc period P=1 by upstream's (1-0.693/H)^P with H=10 "
          "(exact rationals); the order is recomputed at ticks (and when an association appears); associations keep "
          "their usage after their user leaves; priority = the fair-share factor alone, ties by arrival; at every "
          "event the idle capacity goes to pending tasks in that order, first fit, a task that fits nowhere is "
          "skipped; no preemption (the irrevocable conventions); the order facet reads a state's allocation as the "
          "decayed usage; omitted: QOS, partitions, age/size/partition/QOS/TRES/site factors, backfill, preemption, "
          "FairShare=parent, usage reset, billing weights, PriorityFlags, limits; no claims (upstream states none)")
_SETTING = policy.SETTING
_Z3 = Z3Spec.none("a stateful policy over executions with indivisible tasks: not encoded")

CLASSIC = Port(
    name="slurm-classic",
    title="Slurm classic fair share (PriorityFlags=NO_FAIR_TREE): F = 2^(-UE/S), effective usage propagated down "
          "the account tree, decayed CPU-time usage; whole tasks in that priority order, no preemption",
    pins=_PINS + (Pin(_SLURM, COMMIT, "doc/html/classic_fair_share.shtml"),),
    source=f"{_COMMON}; doc/html/classic_fair_share.shtml ({_MF}/priority_multifactor.c: _set_usage_efctv, "
           f"_set_assoc_usage_efctv, _set_assoc_fs_factor)",
    setting=_SETTING,
    notes=("port of the semantics (our code): normalized shares S = product down the path of shares / level "
           "shares; UA = usage / the root's usage; UE = UA under root, else UA + (UE_parent - UA) x shares / level "
           "shares; served by the exact ratio UE/S ascending (F = 2^(-(UE/S)/d) is strictly decreasing in it, so the "
           "dampening d and the normalizer never change the order; F itself is irrational: float only); S = 0 "
           "served last (F = 0); " + _MODEL),
    z3=_Z3, allocate=partial(policy.allocate, algorithm="classic"), order=partial(policy.order, algorithm="classic"),
    time=partial(policy.time_spec, algorithm="classic", name="slurm-classic"))

FAIRTREE = Port(
    name="slurm-fairtree",
    title="Slurm Fair Tree fair share (the default since 19.05): Level Fairshare S/U per level, users ranked by a "
          "depth-first walk of the tree sorted by it; decayed CPU-time usage; whole tasks in rank order, no "
          "preemption",
    pins=_PINS + (Pin(_SLURM, COMMIT, "doc/html/fair_tree.shtml"), Pin(_SLURM, COMMIT, f"{_MF}/fair_tree.c")),
    source=f"{_COMMON}; doc/html/fair_tree.shtml; {_MF}/fair_tree.c (_calc_assoc_fs, _cmp_level_fs, "
           f"_count_tied_accounts, _calc_tree_fs)",
    setting=_SETTING,
    notes=("port of the semantics (our code): at each level S = shares / level shares, U = usage / the parent's "
           "usage (0 if that is 0), LF = S/U exact (inf when U = 0 < S, 0 when S = 0); siblings sorted by LF "
           "descending, users before accounts at equal LF, otherwise declaration order (upstream's qsort is not "
           "stable); depth-first, a user gets rank/count (count = every association ever seen, present or not), "
           "tied users share a rank, an account tied with its previous sibling starts tied; tied sibling accounts "
           "are NOT merged (the code at this commit: _count_tied_accounts always returns 0; the doc says merged); "
           "served by rank descending; " + _MODEL),
    z3=_Z3, allocate=partial(policy.allocate, algorithm="fair-tree"),
    order=partial(policy.order, algorithm="fair-tree"),
    time=partial(policy.time_spec, algorithm="fair-tree", name="slurm-fairtree"))

CLASSIC.register()
FAIRTREE.register()

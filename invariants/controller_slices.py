"""The slices of the state each controller ``always`` property reads, and those outside which
a ``transition`` property holds (issue 56: incremental checking,
:mod:`explorer.search.incremental`): the serial search skips an ``always`` property on a state
whose slices are all its parent's objects, a ``transition`` property on a step that changes
none of its slices.

Each entry was read off the property's code (every branch, not only those a run takes) and is
checked by ``tests/test_incremental.py``, which traces the property's reads on reachable states
of several configurations. A property not listed here is evaluated on every state (the
"quiet" family of ``controller_convergence.py`` is left out: it reads most of every broker, so
it would rarely be skipped). A slice is ``field`` (read whole), ``record.field`` (``zk.parts``)
or ``rows[].field`` (``nodes[].ctx``: that field of any broker).

>>> from invariants.controller import properties
>>> from model.controller import ControllerConfig
>>> ps = {p.name: p for p in with_slices(properties(ControllerConfig()))}
>>> sorted(ps["one_controller_per_epoch"].slices)
['nodes[].alive', 'nodes[].ctx']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from explorer.core import Property, PropertyKind
from model.controller.state import FRESH_PROCESS

__all__ = ["SLICES", "with_slices"]

_ZK_COUNTERS = ("created", "expanded", "deletes", "reassigns", "preferreds", "admin_elections")

_KINDS = (PropertyKind.ALWAYS, PropertyKind.TRANSITION)

#: property name -> the slices its check reads (``always``), or outside which it holds
#: (``transition``)
SLICES: dict[str, frozenset[str]] = {
    name: frozenset(slices)
    for name, slices in {
        "one_controller_per_epoch": ("nodes[].alive", "nodes[].ctx"),
        "controller_znode_valid": (
            "zk.controller",
            "zk.epoch",
            *(f"nodes[].{f}" for f in ("alive", "session", "expired", "pending", "ctx", "active_id")),
        ),
        "broker_epoch_matches_registration": (
            "zk.brokers",
            *(f"nodes[].{f}" for f in ("alive", "zk_in", "zk_out", "expired", "session", "bepoch")),
        ),
        "isr_nonempty_subset": ("zk.ar", "zk.parts"),
        "leader_in_isr": ("zk.parts",),
        "one_leader_per_epoch": ("nodes[].alive", "nodes[].reps"),
        "no_acked_record_lost": ("acked", "zk.parts", "nodes[].alive", "nodes[].reps"),
        "valid_transitions": ("invalid",),
        "context_only_while_active": ("nodes[].alive", "nodes[].ctx", "nodes[].active_id"),
        "no_write_over_newer_controller_state": ("zk.parts", "nodes[].zk_out"),
        "dead_broker_holds_no_process_memory": ("nodes[].alive", *(f"nodes[].{f}" for f in FRESH_PROCESS)),
        "faults_within_budget": (
            "crashes",
            "restarts",
            "expiries",
            "produced",
            "shutdowns",
            "zk.next_session",
            "zk.unclean_dyn",
            *(f"zk.{f}" for f in _ZK_COUNTERS),
        ),
        "witnesses_follow_their_requests": (
            "done",
            "zk.unclean_dyn",
            "zk.admin_elections",
            "zk.deletes",
            "zk.reassigns",
            "zk.expanded",
        ),
        # transition properties: the step holds wherever it changes none of these (each check
        # returns True when they are all the parent's: "t.zk is s.zk", "z is z2", an unchanged
        # activeControllerId, session or context)
        "controller_epoch_monotonic": ("zk.epoch",),
        "controller_epoch_won_once": ("zk.epoch", "zk.epoch_version"),
        "controller_znode_removed_by_owner": ("zk.controller",),
        "leader_epoch_monotonic": ("zk.parts",),
        "leader_elected_from_isr": ("zk.parts",),
        "zookeeper_watches_fire": ("zk.controller", "zk.brokers"),
        "active_controller_id_from_zookeeper": ("nodes[].active_id",),
        "new_session_knows_no_controller": ("nodes[].session",),
        "partition_offline_only_without_live_leader": ("nodes[].ctx",),
        # ZooKeeper writes judged only where a partition state changed
        "isr_order_kept": ("zk.parts",),
        "elected_leader_is_live": ("zk.parts",),
        "no_election_for_a_topic_being_deleted": ("zk.parts",),
        "no_dead_broker_in_written_isr": ("zk.parts",),
    }.items()
}


def with_slices(props: Iterable[Property]) -> list[Property]:
    """``props`` with :data:`SLICES`' declarations set on the ``always`` and ``transition``
    properties it names (the others as they are).

    >>> from explorer.core import always
    >>> [p.slices for p in with_slices([always("valid_transitions", bool, "d"), always("x", bool, "d")])]
    [frozenset({'invalid'}), None]
    """
    out = []
    for p in props:
        got = SLICES.get(p.name)
        if got is not None and p.kind in _KINDS and p.slices is None:
            p = dataclasses.replace(p, slices=got)
        out.append(p)
    return out

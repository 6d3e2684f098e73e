"""What each controller property reads, for partial-order reduction (``--reduce por``).

The entries are location kinds of ``model/controller/footprints.py`` (``zk`` the ZooKeeper
tree, ``alive`` a broker's process, ``sess`` its session, ``ctx`` / ``pend`` / ``ctl`` its controller's
context, parked continuation and watch flags and active id, ``rep`` / ``log`` its replicas,
``zo`` / ``zi`` / ``ev`` / ``ch`` the queues and channels, and the whole-state fields). A step
that changes none of a property's kinds cannot change its verdict (for a ``transition``
property: such a step satisfies it, and it cannot change the verdict of another step).
``@quiet`` marks the properties that hold in every state that is not quiet
(``controller_convergence.serving``): the steps never enabled in a quiet state cannot turn
them from false to true (``footprints.QUIET_DISABLED_KINDS``).

A property missing here reads everything (no reduction while it is undecided).
``tests/test_reduction.py`` checks the table against the properties on sampled states.

>>> sorted(READS["one_controller_per_epoch"])
['alive', 'ctx']
"""

from __future__ import annotations

import dataclasses

from explorer.core import Property

__all__ = ["READS", "declare_reads"]

_QUIET = frozenset({"@quiet", "ch", "ev", "pend", "zo", "zi", "alive", "sess", "cs"})
_NODE = frozenset(
    {"alive", "sess", "bep", "ctl", "ctx", "pend", "ev", "zo", "zi", "seen", "rep", "log", "cs", "mc"}
)

READS: dict[str, frozenset[str]] = {
    # controller
    "one_controller_per_epoch": frozenset({"alive", "ctx"}),
    "controller_epoch_monotonic": frozenset({"zk"}),
    "controller_epoch_won_once": frozenset({"zk"}),
    "controller_znode_valid": frozenset({"zk", "alive", "sess", "pend", "ctx", "ctl"}),
    "controller_znode_removed_by_owner": frozenset({"zk"}),
    "zk_writes_fenced": frozenset({"zk"}),
    # a delivery's verdict: the epochs it compares and whether it changed its broker
    "brokers_reject_stale_controller_epoch": frozenset({"alive", "seen", "bep", "rep", "log", "cs"}),
    "brokers_reject_stale_broker_epoch": frozenset({"alive", "seen", "bep", "rep", "log", "cs"}),
    # partitions
    "leader_in_isr": frozenset({"zk"}),
    "isr_nonempty_subset": frozenset({"zk"}),
    "leader_epoch_monotonic": frozenset({"zk"}),
    "one_leader_per_epoch": frozenset({"alive", "rep"}),
    "no_acked_record_lost": frozenset({"acked", "zk", "alive", "rep", "log"}),
    "valid_transitions": frozenset({"invalid"}),
    "isr_order_kept": frozenset({"zk"}),
    "no_dead_broker_in_written_isr": frozenset({"zk", "ctx"}),
    # convergence, once quiet
    "controller_converges": _QUIET | {"ctx", "zk", "ctl"},
    "broker_views_match_zookeeper": _QUIET | {"zk", "rep"},
    "context_matches_zookeeper": _QUIET | {"zk", "ctx"},
    "replica_states_match_liveness": _QUIET | {"ctx"},
    "no_leaderless_partition_when_quiet": _QUIET | {"zk"},
    "metadata_cache_matches_zookeeper": _QUIET | {"zk", "mc"},
    # what a deposed controller does
    "context_only_while_active": frozenset({"alive", "ctx", "ctl"}),
    "resigned_controller_sends_nothing": frozenset({"ctx", "ch"}),
    "no_write_over_newer_controller_state": frozenset({"zk", "zo"}),
    # witnesses
    "failover": frozenset({"alive", "ctx", "pend"}),
    "second_controller_failover": frozenset({"alive", "ctx", "pend"}),
    "expiry_with_write_in_flight": frozenset({"sess", "zo"}),
    "partition_offline_and_back": frozenset({"history", "zk", "rep"}),
    "acked_record": frozenset({"acked"}),
    "topic_created_online": frozenset({"zk", "alive", "ctx"}),
    "unclean_election": frozenset({"history"}),
    # admin workflows
    "deleted_topic_gone": frozenset({"zk", "alive", "ctx", "pend"}),
    "reassignment_complete": frozenset({"zk"}),
    "controlled_shutdown_never_elects_shutting_down": frozenset({"zk", "ctx"}),
    "preferred_election_elects_preferred": frozenset({"zk", "ctx"}),
    **{
        name: frozenset({"done"})
        for name in (
            "topic_deleted",
            "deletion_resumed_on_startup",
            "partition_added",
            "reassignment_completed",
            "reassignment_resumed_after_failover",
            "controlled_shutdown_done",
            "preferred_election_done",
            "auto_rebalance_elects",
            "unclean_enabled_and_used",
        )
    },
}
assert all(r <= _NODE | {"@quiet", "zk", "ch", "acked", "history", "done", "invalid"} for r in READS.values())


def declare_reads(props: list[Property]) -> list[Property]:
    """``props`` with ``reads`` set from :data:`READS` (properties not in it are unchanged).

    >>> from explorer.core import always
    >>> [p.reads for p in declare_reads([always("valid_transitions", bool, ""), always("x", bool, "")])]
    [frozenset({'invalid'}), None]
    """
    return [
        dataclasses.replace(p, reads=READS[p.name]) if p.name in READS and p.reads is None else p
        for p in props
    ]

"""The renaming of the controller's programs (``program.py``) and parked continuations
(``continuations.py``) by one :class:`model.controller.renamer.Renamer` ``r``: every broker,
partition and topic id a step or a continuation's data holds, matched by its class."""

from __future__ import annotations

from typing import Any

from model.controller.continuations import (
    PARKED,
    AssignmentWritten,
    ElectLeaderForPartitionsRead,
    ElectLeaderForPartitionsWritten,
    InitializeLeaderAndIsrWritten,
    PartitionModificationsRead,
    ReassignmentPartitionStateRead,
    RemoveReplicasFromIsrRead,
    RemoveReplicasFromIsrWritten,
    TopicZNodeDeleted,
)
from model.controller.program import (
    STEPS,
    AddLiveBrokersAndEpochs,
    CompleteDeleteTopic,
    ControlledShutdownRespond,
    ElectLeaderForPartitions,
    FailReplicaDeletion,
    MoveToReplicaDeletionStarted,
    NewReplicasOnline,
    OfflineReplicas,
    OnBrokerFailure,
    OnBrokerStartup,
    OnNewPartitionCreation,
    OnPartitionReassignment,
    OnTopicDeletion,
    RemoveLiveBrokers,
    ResumeDeletionForTopics,
    SendStopReplica,
    StopOldReplicasOfReassignedPartition,
    TriggerOnlinePartitionStateChange,
    sort_runs,
)


def rename_step(r: Any, op: tuple) -> tuple:
    """One program step (a plain tuple is read as its record)."""
    if type(op) is tuple:
        op = STEPS.view(op)
    B, P, T = r.B, r.P, r.T
    match op:
        case TriggerOnlinePartitionStateChange(t):
            return op if t < 0 else TriggerOnlinePartitionStateChange(T[t])
        case ElectLeaderForPartitions(strategy, ps):
            return ElectLeaderForPartitions(strategy, r.pset(ps))
        case OnBrokerStartup(bs) | OnBrokerFailure(bs) | RemoveLiveBrokers(bs):
            return type(op)(r.bset(bs))
        case OfflineReplicas(b, ps):
            return OfflineReplicas(B[b]) if len(op) == 2 else OfflineReplicas(B[b], r.pset(ps))
        case AddLiveBrokersAndEpochs(bes):
            return AddLiveBrokersAndEpochs(tuple(sorted((B[b], e) for b, e in bes)))
        case OnNewPartitionCreation(ps) | NewReplicasOnline(ps):
            return type(op)(r.pset(ps))
        case ResumeDeletionForTopics(ts):
            return ResumeDeletionForTopics(r.tset(ts))
        case OnTopicDeletion(t) | CompleteDeleteTopic(t):
            return type(op)(T[t])
        case MoveToReplicaDeletionStarted(rs) | FailReplicaDeletion(rs):
            return type(op)(tuple(sorted((B[b], r.pset(ps)) for b, ps in rs)))
        case OnPartitionReassignment(p, mode):
            return OnPartitionReassignment(P[p], mode)
        case StopOldReplicasOfReassignedPartition(p, old):
            return StopOldReplicasOfReassignedPartition(P[p], r.bs(old))
        case ControlledShutdownRespond(b):
            return ControlledShutdownRespond(B[b])
        case SendStopReplica(b, ps, delete) if b >= 0:
            return SendStopReplica(B[b], r.pset(ps), delete)
        case SendStopReplica(b, ps, old):
            return SendStopReplica(b, r.pset(ps), r.bs(old))
    return op  # no argument


def rename_pending(r: Any, pend: tuple | None) -> tuple | None:
    """A parked continuation (a plain tuple is read as its record)."""
    if pend is None:
        return None
    k = PARKED.view(pend)
    B, P = r.B, r.P
    batch = tuple((r.b(d), r.entry(e)) for d, e in k.batch)
    rest = sort_runs(tuple(rename_step(r, op) for op in k.rest))
    match k:
        case InitializeLeaderAndIsrWritten(elect):
            return InitializeLeaderAndIsrWritten(r.pset(elect), batch=batch, rest=rest)
        case ElectLeaderForPartitionsRead(strategy, ps):
            return ElectLeaderForPartitionsRead(strategy, r.pset(ps), batch=batch, rest=rest)
        case ElectLeaderForPartitionsWritten(strategy, items):
            items = tuple(sorted(((P[p], r.bs(rec), u) for p, rec, u in items), key=lambda e: e[0]))
            return ElectLeaderForPartitionsWritten(strategy, items, batch=batch, rest=rest)
        case RemoveReplicasFromIsrRead(b, ps) | RemoveReplicasFromIsrWritten(b, ps):
            return type(k)(B[b], r.pset(ps), batch=batch, rest=rest)
        case PartitionModificationsRead(t) | TopicZNodeDeleted(t):
            return type(k)(r.T[t], batch=batch, rest=rest)
        case ReassignmentPartitionStateRead(p, mode):
            return ReassignmentPartitionStateRead(P[p], mode, batch=batch, rest=rest)
        case AssignmentWritten(p, phase, replicas):
            return AssignmentWritten(P[p], phase, r.bs(replicas), batch=batch, rest=rest)
    return type(k)(batch=batch, rest=rest)  # no data

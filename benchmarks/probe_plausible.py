"""A probe of plausible one-line controller mistakes (issue 35): each mistake is a small source
patch of ``model/controller/`` or ``model/election.py`` that a Kafka developer could plausibly
write, applied in a throwaway clone and run against the release suite's controller entries
(``controller-ref`` left out), cheapest first, stopping at the first entry that fails.

Run from a clone of the project with the C accelerator built (never in the working tree: the
clone's model files are patched and restored)::

    python3 -m benchmarks.probe_plausible --results docs/mutation/probe-plausible.jsonl [--ids a,b]

Each line of the results file is one mistake: its id, file:line, class, description, verdict
(``killed``, ``survived``, ``crashed``: exit 4, ``timeout``), the killing entry and the message
naming the property, and the seconds spent. A results file already holding a mistake skips it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple


class Mistake(NamedTuple):
    id: str
    file: str
    old: str
    new: str
    klass: str
    doc: str


#: the controller entries of the release suite but ``controller-ref``, cheapest first (by the
#: seconds of the 907ad5d measure's baseline; the entries added since at their own cost)
ENTRIES = (
    "controller-admin-shutdowns",
    "controller-admin-shutdowns-selectors-0.8",
    "controller-small",
    "controller-cold-start-symmetric",
    "controller-cold-start-symmetric-metadata",
    "controller-admin-reassign-follower",
    "controller-admin-delete-reassign",
    "controller-topic-creation",
    "controller-records",
    "controller-topic-creation-replicated",
    "controller-unclean-election",
    "controller-symmetric-partitions",
    "controller-admin-selectors-0.8",
    "controller-admin-unclean-election",
    "controller-spare-brokers",
    "controller-admin-reassign-delete",
    "controller-admin",
    "controller-admin-strict-transitions",
    "controller-admin-printed-table",
    "controller-admin-create-after-delete",
    "controller-records-restart",
    "controller-metadata",
    "controller-admin-reassign-unnoticed-death",
    "controller-admin-preferred-selectors-0.8",
    "controller-admin-rebalance",
    "controller-admin-preferred",
    "controller-admin-delete-preferred",
    "controller-admin-shutdown",
    "controller-admin-shutdown-single-replica",
    "controller-admin-unclean-election-shutdown",
    "controller-admin-metadata",
    "controller-admin-shutdown-selectors-0.8",
    "controller-admin-delete-stale-broker-epoch",
    "controller-0.8",
    "controller-duplicate-delivery",
    "controller-two-changes",
    "controller-admin-reassign",
    "controller-explore",
    "controller-queued-expiry",
)

E = "model/election.py"
SM = "model/controller/state_machines.py"
CT = "model/controller/controller.py"
BL = "model/controller/broker_lifecycle.py"
RM = "model/controller/replica_manager.py"
ZK = "model/controller/zookeeper.py"
AD = "model/controller/admin.py"
TD = "model/controller/topic_deletion.py"
TC = "model/controller/topics.py"

MISTAKES: tuple[Mistake, ...] = (
    # --- leader election
    Mistake(
        "unclean-ignores-liveness",
        E,
        "    if unclean_leader_election_enabled:\n        for replica in assignment:\n"
        "            if contains(live_replicas, replica):",
        "    if unclean_leader_election_enabled:\n        for replica in assignment:\n            if True:",
        "election",
        "unclean election takes the first assigned replica, live or not",
    ),
    Mistake(
        "offline-ignores-isr",
        E,
        "    for replica in assignment:\n        if contains(live_replicas, replica) and contains(isr, replica):\n"
        "            return replica\n    if unclean_leader_election_enabled:",
        "    for replica in assignment:\n        if contains(live_replicas, replica):\n"
        "            return replica\n    if unclean_leader_election_enabled:",
        "election",
        "offline election's clean pass takes the first live replica, in the ISR or not",
    ),
    Mistake(
        "clean-leader-keeps-dead-isr",
        E,
        "        new_isr = keep_members(current.isr, live_replicas)",
        "        new_isr = current.isr",
        "election",
        "a clean offline election keeps the dead ISR members (no isr.filter(isReplicaOnline))",
    ),
    Mistake(
        "admin-unclean-before-isr-check",
        E,
        "    for replica in isr:\n        if contains(live_replicas, replica):\n            return False\n"
        "    if allow_unclean:\n        return True\n",
        "    if allow_unclean:\n        return True\n    for replica in isr:\n"
        "        if contains(live_replicas, replica):\n            return False\n",
        "election",
        "collectUncleanLeaderElectionState checks allowUnclean before the live ISR",
    ),
    Mistake(
        "preferred-ignores-isr",
        E,
        "    if contains(live_replicas, preferred) and contains(isr, preferred):",
        "    if contains(live_replicas, preferred):",
        "election",
        "preferred replica election elects the preferred replica when it is live, in the ISR or not",
    ),
    Mistake(
        "preferred-ignores-liveness",
        E,
        "    if contains(live_replicas, preferred) and contains(isr, preferred):",
        "    if contains(isr, preferred):",
        "election",
        "preferred replica election elects the preferred replica when it is in the ISR, live or not",
    ),
    Mistake(
        "shutdown-elects-shutting-down",
        E,
        "            and contains(isr, replica)\n            and not contains(shutting_down_brokers, replica)\n",
        "            and contains(isr, replica)\n",
        "election",
        "controlled shutdown election does not skip shutting-down brokers",
    ),
    Mistake(
        "shutdown-isr-keeps-shutting",
        E,
        "    new_isr = drop_members(current.isr, shutting_down_brokers)",
        "    new_isr = current.isr",
        "election",
        "controlled shutdown election leaves the shutting-down brokers in the ISR",
    ),
    Mistake(
        "reassign-ignores-liveness",
        E,
        "    live_targets = keep_members(target_replicas, live_replicas)\n"
        "    leader = reassign_partition_leader_election(target_replicas, current.isr, live_targets)",
        "    leader = reassign_partition_leader_election(target_replicas, current.isr, target_replicas)",
        "election",
        "reassignment election takes the first target replica in the ISR, live or not",
    ),
    Mistake(
        "new-partition-isr-all-assigned",
        E,
        "    return LeaderAndIsr(live_assigned[0], INITIAL_LEADER_EPOCH, live_assigned, INITIAL_ZK_VERSION)",
        "    return LeaderAndIsr(live_assigned[0], INITIAL_LEADER_EPOCH, assignment, INITIAL_ZK_VERSION)",
        "topic creation",
        "a new partition's ISR is its whole assignment, dead replicas included",
    ),
    Mistake(
        "new-partition-leader-first-assigned",
        E,
        "    return LeaderAndIsr(live_assigned[0], INITIAL_LEADER_EPOCH, live_assigned, INITIAL_ZK_VERSION)",
        "    return LeaderAndIsr(assignment[0], INITIAL_LEADER_EPOCH, live_assigned, INITIAL_ZK_VERSION)",
        "topic creation",
        "a new partition's leader is the first assigned replica, live or not",
    ),
    Mistake(
        "shutdown-single-replica-not-skipped",
        E,
        "    if len(assignment) <= 1 or not has_leader_and_isr",
        "    if len(assignment) < 1 or not has_leader_and_isr",
        "controlled shutdown",
        "controlled shutdown does not skip single-replica partitions (off by one)",
    ),
    Mistake(
        "offline-replica-leader-kept",
        E,
        "    if replica_id == current.leader:\n        leader = NO_LEADER\n",
        "",
        "ISR changes",
        "doRemoveReplicasFromIsr keeps an offline replica as leader",
    ),
    # --- epoch fencing
    Mistake(
        "broker-epoch-check-flipped",
        RM,
        "stale_broker = cfg.broker_epoch and msg.broker_epoch < n.bepoch",
        "stale_broker = cfg.broker_epoch and msg.broker_epoch > n.bepoch",
        "epoch fencing",
        "a broker rejects requests of a newer broker epoch instead of an older one (KIP-380)",
    ),
    Mistake(
        "partition-write-ignores-zkversion",
        ZK,
        "                            ok = cur is not None and cur.version == z.version",
        "                            ok = cur is not None",
        "epoch fencing",
        "the controller's partition-state write is not conditioned on the zkVersion read",
    ),
    Mistake(
        "isr-write-ignores-zkversion",
        ZK,
        "                if cur is not None and cur.version == z.version:\n"
        "                    new = z._replace(version=z.version + 1)\n"
        "                    # ReplicaManager.recordIsrChange",
        "                if cur is not None:\n"
        "                    new = z._replace(version=z.version + 1)\n"
        "                    # ReplicaManager.recordIsrChange",
        "epoch fencing",
        "a leader's ISR write (Partition.updateIsr) is not conditioned on its cached zkVersion",
    ),
    Mistake(
        "controller-register-ignores-epoch-version",
        ZK,
        "                if zk.controller is not None or zk.epoch_version != version:",
        "                if zk.controller is not None:",
        "epoch fencing",
        "registerControllerAndIncrementControllerEpoch does not check /controller_epoch's zkVersion",
    ),
    Mistake(
        "election-skips-newer-controller-check",
        SM,
        "            if z is None or self.written_by_newer_controller(c, z):\n"
        "                continue  # failed election",
        "            if z is None:\n                continue  # failed election",
        "epoch fencing",
        "doElectLeaderForPartitions does not abort on a state written by a newer controller",
    ),
    # --- failover
    Mistake(
        "failover-dead-leader-online",
        SM,
        "return initial_partition_state(z.leader, z.leader != NO_LEADER and live[z.leader] != 0, True)",
        "return initial_partition_state(z.leader, z.leader != NO_LEADER, True)",
        "failover",
        "initializePartitionState: a partition whose leader's broker is dead starts Online",
    ),
    Mistake(
        "failover-dead-replica-online",
        SM,
        "            initial_replica_state(live[r] != 0) if r in assigned",
        "            initial_replica_state(True) if r in assigned",
        "failover",
        "initializeReplicaState: a replica on a dead broker starts OnlineReplica",
    ),
    Mistake(
        "failover-no-watch",
        ZK,
        "                    resp = ControllerContext(live, zk.parts)\n                node = node._replace(watch=True)",
        "                    resp = ControllerContext(live, zk.parts)",
        "ZooKeeper watches",
        "the failover's reads register no watch (child/data change handlers not registered)",
    ),
    Mistake(
        "resign-keeps-watches",
        CT,
        '        """``onControllerResignation``: unregister handlers, shut the channels, reset the context."""\n'
        "        c.watch = False\n",
        '        """``onControllerResignation``: unregister handlers, shut the channels, reset the context."""\n',
        "failover",
        "onControllerResignation does not unregister the controller's watches",
    ),
    Mistake(
        "failover-no-replica-startup",
        CT,
        "        c.send_requests_to_brokers(batch)\n        # partitionStateMachine.startup()",
        "        # partitionStateMachine.startup()",
        "failover",
        "onControllerFailover drops replicaStateMachine.startup()'s LeaderAndIsr requests",
    ),
    # --- broker lifecycle
    Mistake(
        "bounce-not-detected",
        BL,
        "if live[b] and cur[b] and cur[b] > live[b])",
        "if live[b] and cur[b] and cur[b] < live[b])",
        "broker lifecycle",
        "processBrokerChange's bouncedBrokerIds compares the epochs the wrong way (KIP-380)",
    ),
    Mistake(
        "startup-no-election",
        BL,
        "        prog: tuple = (TriggerOnlinePartitionStateChange(),)\n        ctx = c.ctx\n        if ctx.reassigning:",
        "        prog: tuple = ()\n        ctx = c.ctx\n        if ctx.reassigning:",
        "broker lifecycle",
        "onBrokerStartup does not trigger the online partition state change",
    ),
    Mistake(
        "failure-keeps-shutting-down",
        BL,
        "        if ctx.shutting:\n            c.ctx = ctx = ctx._replace(shutting=tuple(b for b in ctx.shutting if b not in brokers))\n",
        "",
        "broker lifecycle",
        "onBrokerFailure does not remove the dead brokers from shuttingDownBrokerIds",
    ),
    Mistake(
        "failure-no-um-when-elected",
        BL,
        "        if not without_leader:\n            prog += (SendUpdateMetadataRequest(),)",
        "        if without_leader:\n            prog += (SendUpdateMetadataRequest(),)",
        "broker lifecycle",
        "onBrokerFailure's UpdateMetadata condition inverted (sent only when some partition lost its leader)",
    ),
    Mistake(
        "broker-epoch-not-incremented",
        ZK,
        "                    epoch = zk.czxids[b] + 1",
        "                    epoch = zk.czxids[b]",
        "ZooKeeper sessions",
        "a broker's re-registration keeps its previous czxid as broker epoch",
    ),
    # --- ISR changes
    Mistake(
        "isr-notifications-all-deleted",
        ZK,
        "zk = zk._replace(isr_changes=tuple(e for e in zk.isr_changes if e not in read))",
        "zk = zk._replace(isr_changes=())",
        "ISR changes",
        "deleteIsrChangeNotifications deletes every notification, not only those read",
    ),
    Mistake(
        "isr-expand-before-caught-up",
        RM,
        "if f not in lr2.isr and offset >= lr2.hw and",
        "if f not in lr2.isr and offset >= 0 and",
        "ISR changes",
        "maybeExpandIsr takes a follower back before it reaches the high watermark",
    ),
    # --- topic creation / deletion
    Mistake(
        "topic-change-resurrects-deleted",
        TC,
        "            if pst[t * ppt] == PartitionState.NonExistentPartition and t not in gone",
        "            if pst[t * ppt] == PartitionState.NonExistentPartition",
        "topic creation",
        "TopicChange treats a deleted topic still listed as new",
    ),
    Mistake(
        "deletion-starts-on-dead-replicas",
        TD,
        "            if r not in live:\n                dead = True",
        "            if False:\n                dead = True",
        "topic deletion",
        "startReplicaDeletion sends StopReplica to replicas on dead brokers instead of marking them ineligible",
    ),
    Mistake(
        "deletion-retries-ineligible",
        TD,
        "            if t not in ctx.ineligible and not started:",
        "            if not started:",
        "topic deletion",
        "resumeDeletions starts topics marked ineligible",
    ),
    Mistake(
        "failure-no-fail-replica-deletion",
        BL,
        "                if dele:\n                    prog += (FailReplicaDeletion(((b, dele),)),)\n",
        "",
        "topic deletion",
        "onBrokerFailure does not fail the deletion of the dead broker's replicas",
    ),
    Mistake(
        "startup-no-resume-deletion",
        BL,
        "        if ctx.deleting:\n            prog += self.resume_deletion_for_brokers(c, brokers)\n",
        "",
        "topic deletion",
        "onBrokerStartup does not resume the deletion of topics with replicas on the new broker",
    ),
    # --- reassignment
    Mistake(
        "reassign-to-dead-broker",
        AD,
        "        return c.is_topic_queued_up_for_deletion(p) or rar == c.ctx.ar[p]\n",
        "        return c.is_topic_queued_up_for_deletion(p) or rar == c.ctx.ar[p] or not all(c.ctx.live[r] for r in rar)\n",
        "reassignment",
        "a reassignment to a dead broker is refused, at a failover too (0.10.0's check, KAFKA-4214)",
    ),
    Mistake(
        "reassign-caught-up-any",
        AD,
        "        caught_up = all(r in z.isr for r in rar)",
        "        caught_up = any(r in z.isr for r in rar)",
        "reassignment",
        "a reassignment completes once any target replica is in the ISR (all intended)",
    ),
    Mistake(
        "reassign-keeps-dead-leader",
        AD,
        "strategy = S_REASSIGN if (z.leader not in rar or z.leader not in live) else S_EPOCH",
        "strategy = S_REASSIGN if z.leader not in rar else S_EPOCH",
        "reassignment",
        "a completed reassignment keeps a leader in RAR whose broker is dead (no re-election)",
    ),
    Mistake(
        "reassign-old-after-update",
        AD,
        "        old = tuple(r for r in ctx.ar[p] if r not in rar)\n"
        "        for r in rar:\n            c.set_rstate(p, r, ReplicaState.OnlineReplica)\n"
        "        self.update_partition_replica_assignment(c, p, rar)\n",
        "        for r in rar:\n            c.set_rstate(p, r, ReplicaState.OnlineReplica)\n"
        "        self.update_partition_replica_assignment(c, p, rar)\n"
        "        old = tuple(r for r in c.ctx.ar[p] if r not in rar)\n",
        "reassignment",
        "OAR - RAR computed after AR = RAR in memory: the old replicas are never stopped",
    ),
    # --- controlled shutdown
    Mistake(
        "shutdown-respond-first",
        AD,
        "        prog: list = []\n        if led:\n            prog.append(ElectLeaderForPartitions(S_CONTROLLED_SHUTDOWN",
        "        prog: list = [ControlledShutdownRespond(b)]\n        if led:\n"
        "            prog.append(ElectLeaderForPartitions(S_CONTROLLED_SHUTDOWN",
        "controlled shutdown",
        "doControlledShutdown answers before moving leadership (the answer's remaining partitions empty too early)",
    ),
    Mistake(
        "shutdown-stale-epoch-flipped",
        AD,
        "if c.sys.cfg.broker_epoch and epoch and epoch < ctx.live[b]:",
        "if c.sys.cfg.broker_epoch and epoch and epoch > ctx.live[b]:",
        "controlled shutdown",
        "doControlledShutdown's stale broker epoch check compares the wrong way (KIP-380)",
    ),
    Mistake(
        "shutdown-followers-not-offline",
        AD,
        "            prog += [SendStopReplica(b, tuple(followed), False), OfflineReplicas(b, tuple(followed))]",
        "            prog += [SendStopReplica(b, tuple(followed), False)]",
        "controlled shutdown",
        "doControlledShutdown stops the followers but leaves them in the ISR (no OfflineReplica)",
    ),
    # --- ZooKeeper sessions
    Mistake(
        "expiry-keeps-controller-znode",
        ZK,
        "        if zk.controller is not None and zk.controller[1] == sess:\n"
        "            zk = zk._replace(controller=None)\n",
        "        if zk.controller is not None and zk.controller[1] == sess:\n",
        "ZooKeeper sessions",
        "a session expiry does not delete the session's /controller ephemeral",
    ),
)


#: the entries each class of mistake is tried against first (the rest follow in ENTRIES's order)
FIRST = {
    "controlled shutdown": ("controller-admin-shutdown",),
    "reassignment": (
        "controller-admin-reassign-follower",
        "controller-admin-delete-reassign",
        "controller-admin-reassign",
    ),
    "topic deletion": ("controller-admin", "controller-admin-delete-stale-broker-epoch"),
    "topic creation": ("controller-topic-creation",),
    "ISR changes": ("controller-records", "controller-records-restart"),
}


def line_of(root: Path, m: Mistake) -> int:
    text = (root / m.file).read_text()
    return text[: text.index(m.old)].count("\n") + 1


def apply(root: Path, m: Mistake) -> str:
    path = root / m.file
    text = path.read_text()
    if text.count(m.old) != 1:
        raise SystemExit(f"{m.id}: the patch's text occurs {text.count(m.old)} times in {m.file}")
    path.write_text(text.replace(m.old, m.new))
    return text


def run_entry(entry: str, timeout: float) -> tuple[int, str, float]:
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "explorer",
                "release",
                "--quiet",
                "--entries",
                entry,
                "--report-dir",
                "/tmp/probe-reports",
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 3, "wall timeout", time.monotonic() - t0
    verdict = [ln.strip() for ln in (p.stdout + p.stderr).splitlines() if "=>" in ln or "Error" in ln]
    return p.returncode, " | ".join(verdict)[-600:], time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--ids", default="")
    ap.add_argument("--entries", default="")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--tag", default="before")
    args = ap.parse_args()
    root = Path.cwd()
    results = Path(args.results)
    done = set()
    if results.exists():
        for ln in results.read_text().splitlines():
            if ln.strip():
                d = json.loads(ln)
                done.add((d["id"], d.get("tag", "before")))
    ids = set(args.ids.split(",")) if args.ids else None
    entries = tuple(args.entries.split(",")) if args.entries else ENTRIES
    for m in MISTAKES:
        if (ids is not None and m.id not in ids) or (m.id, args.tag) in done:
            continue
        line = line_of(root, m)
        original = apply(root, m)
        verdict, killer, message, spent = "survived", None, "", 0.0
        first = tuple(e for e in FIRST.get(m.klass, ()) if e in entries)
        if m.id.startswith("shutdown-"):
            first = ("controller-admin-shutdown",)
        order = first + tuple(e for e in entries if e not in first)
        try:
            for e in order:
                rc, msg, sec = run_entry(e, args.timeout)
                spent += sec
                if rc == 0:
                    continue
                verdict = {1: "killed", 4: "crashed", 3: "timeout"}.get(rc, f"exit {rc}")
                killer, message = e, msg
                break
        finally:
            (root / m.file).write_text(original)
        rec = {
            "id": m.id,
            "where": f"{m.file}:{line}",
            "class": m.klass,
            "doc": m.doc,
            "tag": args.tag,
            "verdict": verdict,
            "entry": killer,
            "message": message,
            "seconds": round(spent, 1),
        }
        with results.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"{m.id:40s} {verdict:9s} {killer or '':40s} {spent:7.1f}s {message[:150]}", flush=True)


if __name__ == "__main__":
    main()

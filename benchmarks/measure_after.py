"""The "after" column of issue 35's measure on today's model (``docs/mutation.md``, "The measure
on today's model"): each survivor of the measure at 907ad5d, written as the same one-line change
to today's model (the mutant ids name 907ad5d's lines, which have moved), run against today's
controller entries but ``controller-ref``, cheapest first, stopping at the first entry that
fails. The driver and the entry order are the probe's (``benchmarks/probe_plausible.py``); run it
in a clone, whose model files are patched and restored::

    git clone -q . /tmp/after && cd /tmp/after && python3 setup.py build_ext --inplace
    python3 -m benchmarks.measure_after --results after.jsonl            # every survivor
    python3 -m benchmarks.measure_after --results after.jsonl --ids ID1,ID2 --entries e1,e2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.probe_plausible import ENTRIES, Mistake, apply, line_of, run_entry

SM = "model/controller/state_machines.py"
SY = "model/controller/system.py"
_U = "                u = 3 if strategy == S_ADMIN_UNCLEAN else 1 if cfg.unclean(p) else 2"

#: the survivors of mutants 151 to 300 (907ad5d ids), as the same change to today's model, and
#: those of mutants 1 to 150 that a later entry now reaches
SURVIVORS: tuple[Mistake, ...] = (
    Mistake(
        "model/controller/state.py:115:18:int-1",
        "model/controller/state.py",
        '    "active_id": -1,',
        '    "active_id": -0,',
        "controller logic",
        "a crashed broker's fresh activeControllerId is 0, not -1",
    ),
    Mistake(
        "model/controller/state_machines.py:154:65:ne-eq",
        SM,
        "if cfg.leader_selectors is LeaderSelectors.KAFKA_0_8 and strategy != S_EPOCH:",
        "if cfg.leader_selectors is LeaderSelectors.KAFKA_0_8 and strategy == S_EPOCH:",
        "controller logic",
        "leader_selectors = 0.8 runs the 2.x strategies (and the 0.8 selectors only for the epoch bump)",
    ),
    Mistake(
        "model/controller/state_machines.py:218:20:int+1",
        SM,
        _U,
        _U.replace("u = 3", "u = 4"),
        "controller logic",
        "an admin unclean election is recorded as neither admin nor dynamic",
    ),
    Mistake(
        "model/controller/state_machines.py:218:20:int-1",
        SM,
        _U,
        _U.replace("u = 3", "u = 2"),
        "controller logic",
        "an admin unclean election is recorded as one under a dynamically enabled topic config",
    ),
    Mistake(
        "model/controller/state_machines.py:258:21:not-if",
        SM,
        "                elif unclean == 3:",
        "                elif not unclean == 3:",
        "controller logic",
        "a static unclean election is recorded as the admin's, the admin's as none",
    ),
    Mistake(
        "model/controller/state_machines.py:218:58:int+1",
        SM,
        _U,
        _U.replace("else 1 if", "else 2 if"),
        "controller logic",
        "an unclean election under the static topic config is recorded as under a dynamic one",
    ),
    Mistake(
        "model/controller/system.py:280:26:lt-le",
        SY,
        "if self.added and zk.expanded < self.topics_at_start and zk.expanded not in zk.gone:",
        "if self.added and zk.expanded <= self.topics_at_start and zk.expanded not in zk.gone:",
        "controller logic",
        "the admin adds partitions to one topic more than exists at start",
    ),
    Mistake(
        "model/controller/system.py:284:80:int+1",
        SY,
        "s._replace(zk=zk._replace(expanded=t + 1), nodes=tuple(ns))",
        "s._replace(zk=zk._replace(expanded=t + 2), nodes=tuple(ns))",
        "controller logic",
        "the admin's next topic to give partitions skips one",
    ),
    Mistake(
        "model/controller/system.py:312:15:and-drop#1",
        SY,
        "            if cn.alive and cn.ctx is not None:\n                ev = events.ReplicaLeaderElection()",
        "            if cn.alive:\n                ev = events.ReplicaLeaderElection()",
        "controller logic",
        "an admin's ElectLeaders request queued at a /controller broker without a controller context",
    ),
    Mistake(
        "model/controller/state_machines.py:326:20:and-drop#3",
        SM,
        "                    and c.is_topic_queued_up_for_deletion(p)\n"
        "                    and not sys.cfg.strict_deletion_transitions\n",
        "                    and c.is_topic_queued_up_for_deletion(p)\n",
        "controller logic",
        "Kafka's invalid transition of a deleted replica skipped under the strict variant too",
    ),
    Mistake(
        "model/controller/system.py:334:20:and-drop#3",
        SY,
        "                    and n.alive\n                    and self.session_live(n)\n",
        "                    and n.alive\n",
        "controller logic",
        "a broker whose session has expired sends a ControlledShutdownRequest",
    ),
    Mistake(
        "model/controller/system.py:344:46:int-1",
        SY,
        "ns[b] = ns[b]._replace(cs=3 + c[0])",
        "ns[b] = ns[b]._replace(cs=2 + c[0])",
        "controller logic",
        "a broker asking controller 0 for a controlled shutdown counts itself answered at once",
    ),
    Mistake(
        "model/controller/topic_deletion.py:86:15:and-drop#0",
        "model/controller/topic_deletion.py",
        "            if t not in ctx.ineligible and not started:",
        "            if not started:",
        "controller logic",
        "resumeDeletions starts a topic marked ineligible for deletion",
    ),
    Mistake(
        "model/controller/zookeeper.py:93:19:and-drop#1",
        "model/controller/zookeeper.py",
        "                if reelect and Startup() not in ev:",
        "                if reelect:",
        "controller logic",
        "a broker's re-registration queues Startup even when one is queued already",
    ),
    Mistake(
        "model/controller/zookeeper.py:169:20:drop",
        "model/controller/zookeeper.py",
        '                    nodes[b] = node\n                    self.fire_watches(nodes, Reelect(), "ctl")\n',
        "                    nodes[b] = node\n",
        "controller logic",
        "deleting /controller (the 0.8 resign) fires no watch: no broker re-elects",
    ),
    Mistake(
        "model/controller/zookeeper.py:146:20:drop",
        "model/controller/zookeeper.py",
        "                    resp = ControllerRegistered(True, new_epoch, version + 1)\n"
        "                    nodes[b] = node\n"
        '                    self.fire_watches(nodes, ControllerChange(b), "ctl", skip=b)\n',
        "                    resp = ControllerRegistered(True, new_epoch, version + 1)\n"
        "                    nodes[b] = node\n",
        "controller logic",
        "a new controller's /controller registration fires no watch: the other brokers are not told",
    ),
    Mistake(
        "model/controller/zookeeper.py:226:19:and-drop#0",
        "model/controller/zookeeper.py",
        "                if cur is not None and cur.version == z.version:",
        "                if cur.version == z.version:",
        "controller logic",
        "a leader's ISR write to a partition znode deleted meanwhile reads its version",
    ),
    Mistake(
        "model/election.py:117:29:int-1",
        "model/election.py",
        "    ADMIN_CLIENT_TRIGGERED = 2",
        "    ADMIN_CLIENT_TRIGGERED = 1",
        "controller logic",
        "the admin client's election trigger merged with ZooKeeper's",
    ),
    Mistake(
        "model/controller/broker_lifecycle.py:79:12:drop",
        "model/controller/broker_lifecycle.py",
        "            restart = [p for p, rar in ctx.reassigning if any(b in rar for b in brokers)]\n",
        "",
        "controller logic",
        "onBrokerStartup's restart of the reassignments with a replica on the new broker dropped "
        "(one of mutants 1 to 150: not covered at 907ad5d)",
    ),
    Mistake(
        "model/controller/renamer.py:236:48:int-1",
        "model/controller/renamer.py",
        "return None if e is None else (self.b(e[0]), e[1], self.bs(e[2]))",
        "return None if e is None else (self.b(e[-1]), e[1], self.bs(e[2]))",
        "symmetry plug-in",
        "a metadata cache entry's leader renamed by its ISR (one of mutants 1 to 150: not covered "
        "at 907ad5d, no reduced entry sent UpdateMetadata)",
    ),
    Mistake(
        "model/election.py:645:7:or-drop#0",
        "model/election.py",
        "    if len(assignment) <= 1 or not has_leader_and_isr or topic_queued_for_deletion:",
        "    if not has_leader_and_isr or topic_queued_for_deletion:",
        "controller logic",
        "a controlled shutdown acts on one-replica partitions too",
    ),
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--ids", default="")
    ap.add_argument("--entries", default="")
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    root = Path.cwd()
    results = Path(args.results)
    done = set()
    if results.exists():
        done = {json.loads(ln)["id"] for ln in results.read_text().splitlines() if ln.strip()}
    ids = set(args.ids.split(",")) if args.ids else None
    entries = tuple(args.entries.split(",")) if args.entries else ENTRIES
    for m in SURVIVORS:
        if (ids is not None and m.id not in ids) or m.id in done:
            continue
        line = line_of(root, m)
        original = apply(root, m)
        verdict, killer, message, spent = "survived", None, "", 0.0
        try:
            for e in entries:
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
            "today": f"{m.file}:{line}",
            "doc": m.doc,
            "verdict": verdict,
            "entry": killer,
            "message": message,
            "seconds": round(spent, 1),
        }
        with results.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"{m.id:50s} {verdict:9s} {killer or '':40s} {spent:7.1f}s {message[:150]}", flush=True)


if __name__ == "__main__":
    main()

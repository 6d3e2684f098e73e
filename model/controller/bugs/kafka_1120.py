"""KAFKA-1120 (with KAFKA-5845): a broker that bounces faster than the controller reads
``/brokers/ids`` goes unseen.

Before KIP-380's broker epoch (KAFKA-7235, Kafka 2.2), ``BrokerChange`` compared the *set* of
registered ids with the controller's live brokers (seed 001: 164): a broker that crashed, lost
its session and registered again before the controller read the children looked unchanged, so
neither ``onBrokerFailure`` nor ``onBrokerStartup`` ran; the new process never got its
LeaderAndIsr, and requests queued for its earlier incarnation were applied to it. The model
already has the older design as the variant key ``broker_epoch = false``: the bug is that key.
"""

from __future__ import annotations

from model.controller.bugs import register

register(
    "KAFKA-1120",
    versions="0.8 to 2.1",
    doc="a fast bounce goes unseen: the restarted broker never receives its LeaderAndIsr",
    fixed_by="KAFKA-7235 (KIP-380 broker epoch, Kafka 2.2)",
    family=("KAFKA-5845",),
    implies={"broker_epoch": False},
)

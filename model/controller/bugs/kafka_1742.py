"""KAFKA-1742: ``ControllerContext.removeTopic`` leaves a deleted topic's partitions in the
controller's context.

``completeDeleteTopic`` ends with ``controllerContext.removeTopic(topic)``, which from KAFKA-330
(delete topic, Kafka 0.8.1) to 0.8.2's fix read
``partitionLeadershipInfo = partitionLeadershipInfo.dropWhile(p => p._1.topic.equals(topic))``
(and the same for ``partitionReplicaAssignment``): ``dropWhile`` drops only the *leading* run of
entries of the topic and stops at the first entry of another one, so a deleted topic whose
partitions are not first in the map's iteration order stays in the context: its leadership is
still sent in UpdateMetadata, its partitions are still offered to elections. Fixed in Kafka
0.8.2.0 by ``filter { case (tp, _) => tp.topic != topic }``. The bug is ``removeTopic`` with
``dropWhile`` over the context's partition leadership, whose iteration order the model takes to
be the partitions' (Scala's ``HashMap`` iterates in hash order, so which deleted topics stay
depends on their names).
"""

from __future__ import annotations

from explorer.speedups import set_item
from model.controller.base import ControllerBase
from model.controller.bugs import bug
from model.controller.topic_deletion import TopicDeletionManager


@bug(
    "KAFKA-1742",
    versions="0.8.1 to 0.8.2-beta",
    doc="removeTopic's dropWhile keeps a deleted topic's partitions in the controller's context",
    fixed_by="KAFKA-1742 (removeTopic filters the topic's partitions out, Kafka 0.8.2.0)",
)
class Kafka1742(TopicDeletionManager):
    """``completeDeleteTopic`` with 0.8.1's ``removeTopic`` (``dropWhile``)."""

    def remove_topic(self, c: ControllerBase, t: int) -> tuple:
        """The context's partition leadership with the leading run of topic ``t``'s entries
        dropped: the scan stops at the map's first entry of another topic (the bug)."""
        leaders = c.ctx.leaders
        ppt = c.sys.ppt
        for p, z in enumerate(c.ctx.leaders):
            if z is None:
                continue  # not in the map
            if p // ppt != t:
                break  # dropWhile stops at the first entry of another topic
            leaders = set_item(leaders, p, None)
        return leaders

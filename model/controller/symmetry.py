"""Renamings of brokers, partitions and topics that map the controller model onto itself (for
symmetry reduction, ``--reduce symmetry``: ``explorer/search/symmetry.py``).

A :class:`Permutation` renames broker ``b`` to ``brokers[b]``, partition ``p`` to
``partitions[p]`` and topic ``t`` to ``topics[t]`` everywhere in a state
(:func:`permute_state`): in ZooKeeper's tree, in every broker (its controller context, its
replicas, its metadata cache), in the channels, in every queued message and in a parked
continuation. ZooKeeper session numbers are values, except the initial sessions: broker ``b``
starts with session ``b + 1`` (``Cluster.cold_state``), so a renaming of brokers renames the
sessions ``1 .. brokers`` with them (session ``b + 1`` -> ``brokers[b] + 1``); sessions opened
later (``Zk.next_session`` onwards, all above ``brokers``) keep their number. The model only
compares sessions for equality, so this is a renaming like the others. Epochs, zkVersions,
broker epochs (per-broker counters) and counters are values and keep their value.

Collections the model keeps sorted by id (``Zk.isr_changes``, ``State.acked``, a broker
list it builds by iterating ids, a partition list of a ZooKeeper request, ...) are sorted
again after the renaming, so that the image is the state the model itself would have built;
collections whose order is semantic (queues, an ISR, an assignment, the entries of a
LeaderAndIsr request) keep their order.

:func:`symmetries` gives the non-identity permutations of a configuration's symmetry group:
those that preserve the configuration (the assignment as ordered lists, the topic structure,
the topics with unclean election on) and the initial state, and under which every rule of the
model is equivariant (see its docstring for the restrictions).

>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(brokers=4, assignment=((0, 1),)))
>>> g = Permutation(brokers=(0, 1, 3, 2), partitions=(0,), topics=(0,))
>>> s = sys.init_states()[0]
>>> g(s) == s, [n.session for n in g(s).nodes]
(True, [1, 2, 3, 4])
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

from model.controller.config import ControllerConfig, Elector, ExpiryHandling
from model.controller.renamer import Renamer
from model.controller.state import State

__all__ = ["Permutation", "permute_state", "symmetries"]

#: one renamer (and its memory of images) per permutation in use
_RENAMERS: dict[Any, Any] = {}

#: the most partitions whose topic-structure-preserving permutations are enumerated
MAX_PERMUTED_PARTITIONS = 6


class Permutation(NamedTuple):
    """A renaming: broker ``b`` -> ``brokers[b]``, partition ``p`` -> ``partitions[p]`` (global,
    topic-major indices), topic ``t`` -> ``topics[t]``. Calling it renames a state.

    >>> g = Permutation((1, 0), (0,), (0,))
    >>> g.inverse() == g, g.compose(g).is_identity()
    (True, True)
    """

    brokers: tuple[int, ...]
    partitions: tuple[int, ...]
    topics: tuple[int, ...]

    def __call__(self, s: State) -> State:
        return self.renamer().state(s)

    def renamer(self) -> Renamer:
        """This permutation's renamer (made once; it remembers images, see ``Renamer``)."""
        r = _RENAMERS.get(self)
        if r is None:
            if len(_RENAMERS) > 64:
                _RENAMERS.clear()
            r = _RENAMERS[self] = Renamer(self)
            inv = self.inverse()
            r.inv = r if inv == self else _RENAMERS.setdefault(inv, Renamer(inv))
            r.inv.inv = r
        return r

    def smaller_image(self, s: State, best: State, enc: Callable[[Any], bytes]) -> State | None:
        """``self(s)`` if its encoding ``enc`` sorts before ``best``'s, else None, building the
        image only as far as needed to decide (for ``--reduce symmetry``'s canonicaliser).

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> from explorer.encoding import encode
        >>> s = ControllerSystem(ControllerConfig(brokers=4, assignment=((0, 1),))).init_states()[0]
        >>> g = Permutation((0, 1, 3, 2), (0,), (0,))
        >>> g.smaller_image(s, s, encode) is None  # s is its own image
        True
        """
        return self.renamer().smaller_image(s, best, enc)

    def is_identity(self) -> bool:
        """Every broker, partition and topic keeps its name."""
        return all(tuple(range(len(x))) == x for x in self)

    def inverse(self) -> Permutation:
        """The renaming that undoes this one."""
        return Permutation(*(_invert(x) for x in self))

    def compose(self, other: Permutation) -> Permutation:
        """``self`` after ``other`` (first ``other``, then ``self``)."""
        return Permutation(*(tuple(a[i] for i in b) for a, b in zip(self, other)))


def _invert(perm: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, j in enumerate(perm):
        out[j] = i
    return tuple(out)


def permute_state(s: State, perm: Permutation) -> State:
    """``s`` with every broker, partition and topic renamed by ``perm`` (see the module
    docstring).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> cfg = ControllerConfig(brokers=3, start="cold", assignment=((0,),))
    >>> s = ControllerSystem(cfg).init_states()[0]
    >>> t = permute_state(s, Permutation((0, 2, 1), (0,), (0,)))
    >>> t == s, [n.session for n in t.nodes]
    (True, [1, 2, 3])
    """
    return Renamer(perm).state(s)


def _partition_perms(cfg: ControllerConfig) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(partitions, topics) renamings that keep the topic structure: topics permuted wholesale,
    partitions permuted within each; only the identity above ``MAX_PERMUTED_PARTITIONS``."""
    nt, ppt = cfg.topics, cfg.partitions_per_topic
    ident = (tuple(range(cfg.partitions)), tuple(range(nt)))
    if cfg.partitions > MAX_PERMUTED_PARTITIONS:
        return [ident]
    out = []
    inner = list(itertools.permutations(range(ppt)))
    for tp in itertools.permutations(range(nt)):
        for within in itertools.product(inner, repeat=nt):
            parts = tuple(tp[t] * ppt + within[t][i] for t in range(nt) for i in range(ppt))
            out.append((parts, tuple(tp)))
    return out


def _preserves_config(cfg: ControllerConfig, g: Permutation) -> bool:
    """``g`` maps the configuration onto itself: the assignment (as ordered lists) and the
    topics with their own unclean election setting."""
    replicas = cfg.replicas()
    B = g.brokers
    for p, reps in enumerate(replicas):
        if replicas[g.partitions[p]] != tuple(B[r] for r in reps):
            return False
    return {g.topics[t] for t in cfg.unclean_topics} == set(cfg.unclean_topics)


def _keeps_request_order(cfg: ControllerConfig, g: Permutation) -> bool:
    """``g`` keeps the order of the partitions each broker holds (``p < q`` held by one broker:
    ``g(p) < g(q)``). The entries of a LeaderAndIsr request are in the order the controller
    handled their partitions, phase by phase (each phase in partition order): a renaming that
    reverses two partitions of one request has no image the model would have built."""
    replicas = cfg.replicas()
    P = g.partitions
    for b in range(cfg.brokers):
        held = [P[p] for p, reps in enumerate(replicas) if b in reps]
        if held != sorted(held):
            return False
    return True


def _keeps_failure_order(cfg: ControllerConfig, g: Permutation) -> bool:
    """``g`` keeps the order of every pair of brokers of which one holds a replica, when two
    brokers can be found failed by one ``BrokerChange``: ``onBrokerFailure`` takes the failed
    brokers in id order, and removing a replica-holding broker from the ISRs is a ZooKeeper
    round trip that the next broker waits for. At most one broker fails at once with at most one
    fault in the budget; nor can a 2.x controller that discards its session on expiry
    (``clear-and-put``) find itself failed, so with two brokers only the other one can fail."""
    # a kept session's re-created registration is a failure too (a new broker epoch)
    faults = cfg.max_crashes + cfg.max_session_expiries + cfg.max_orphaned_sessions
    others = cfg.brokers - (1 if not _finds_itself_failed(cfg) else 0)
    if min(faults, others) < 2:
        return True
    holders = {r for reps in cfg.replicas() for r in reps}
    B = g.brokers
    for b, c in itertools.combinations(range(cfg.brokers), 2):
        if (b in holders or c in holders) and B[b] > B[c]:
            return False
    return True


def _finds_itself_failed(cfg: ControllerConfig) -> bool:
    """A controller can read ``/brokers/ids`` without its own registration: its session expired
    and the client kept its context and replayed its requests in a new session (the legacy
    elector's ZkClient, or the pre-2.2 ``queued`` expiry handling)."""
    return cfg.elector is Elector.LEGACY or cfg.session_expiry_handling is ExpiryHandling.QUEUED


def unsupported(cfg: ControllerConfig) -> str | None:
    """Why :func:`symmetries` declares no symmetry for ``cfg`` (None: it looks for them).

    >>> unsupported(ControllerConfig(max_topic_deletions=1))
    'admin workflows act on topics and partitions in index order'
    >>> unsupported(ControllerConfig()) is None
    True
    """
    if getattr(cfg, "mutant", "none") != "none":
        return "a mutant may break equivariance"
    if cfg.admin:
        return "admin workflows act on topics and partitions in index order"
    if cfg.topics_created_later:
        return "topics are created in index order"
    return None


def symmetries(cfg: ControllerConfig, init_states: list[State]) -> list[Permutation]:
    """The non-identity permutations of ``cfg``'s symmetry group: renamings that preserve the
    configuration (:func:`_preserves_config`) and the set of initial states, and keep the order
    of every broker's partitions (:func:`_keeps_request_order`); none for a configuration
    :func:`unsupported` names.

    >>> from model.controller import ControllerSystem
    >>> cfg = ControllerConfig(brokers=4, assignment=((0, 1),))
    >>> symmetries(cfg, ControllerSystem(cfg).init_states())
    [Permutation(brokers=(0, 1, 3, 2), partitions=(0,), topics=(0,))]
    """
    if unsupported(cfg) is not None:
        return []
    init = set(init_states)
    out = []
    for parts, topics in _partition_perms(cfg):
        for brokers in itertools.permutations(range(cfg.brokers)):
            g = Permutation(tuple(brokers), parts, topics)
            if g.is_identity() or not _preserves_config(cfg, g):
                continue
            if not _keeps_request_order(cfg, g) or not _keeps_failure_order(cfg, g):
                continue
            if {g(s) for s in init_states} == init:
                out.append(g)
    return out

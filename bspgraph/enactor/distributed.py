"""The enactor on P devices: partition, run the unmodified step everywhere, exchange, combine.

Each device holds a subgraph in global vertex ids: the out-edges (and, for pull, the in-edges) of
the vertices it owns, and every vertex's state ("duplicate-all" proxies, as in the multi-GPU
Gunrock paper). What happens after each superstep is the lifting contract
(:mod:`bspgraph.enactor.contract`): a device packages the communicated state of the vertices it
returned (their changes, for ``add``), the communicator delivers each package to the owners (to
every device when the primitive ``needs_all``), receivers combine with the declared combiners
and the vertices whose value changed join the next frontier; then scalars are combined over
devices, and the run stops when every device has converged. One collective a superstep sums
the tally (frontier sizes, traffic, devices still running, and what the direction test reads:
see :func:`_union_edges`).

A package is an Update (ids and values) or, in a superstep where many vertices travel, a Slab:
each communicated column over an owner's block of vertices, no ids, neutral where nothing was
returned, applied to the whole block at once. Parts in this process's memory choose together;
across processes (MPI, NCCL) each process chooses for its own device, where the pattern sends
straight to the receivers in one round (selective) and every part is an id range, so that an
inbox may hold both. The choice reads the step's count of its output, except on a GPU where
the frontier's out-edges bound it (each returned vertex has an edge from the frontier): an
Update they make certain that is packed by owner from the step's list as it is, or the Slab
they foretell (over a link, Bits where the state allows: their one-value test travels with
them, and the tally has a device whose test failed send its Slab again), goes without that
read, and the host queues the exchange behind the step's kernels (:func:`_chosen_unread`,
:func:`_foretold`). In one memory such a package goes to its
receivers unread too, as Pieces (views whose start and count the receivers' kernels read),
and its counts come back with the next frontiers': one host read a superstep. Across a link
that carries counts (NCCL; GPUs of one process) a package of at most LENT_BYTES goes unread
as well, its whole buffers and counts (the receiver gets a Piece of a copy), so that a light
superstep reads once a GPU there too.

:func:`_enact`'s loop is the contract, a line a rule; :class:`LiftedRun` holds the run's fixed
parts and a method a phase, and the functions below it are how each phase is done.
"""

from __future__ import annotations

import functools
import math
import time
from types import SimpleNamespace

import numpy as np

from .. import comm
from ..backend import (
    Backend,
    backend_for,
    backend_of,
    clock,
    fused,
    get_backend,
    ops,
    read_together,
    to_host,
    while_alive,
)
from ..comm.message import Bits, Gathered, Mostly, Packed, Piece, Slab, Update, wire_bytes
from ..comm.transport import failing_together
from ..exceptions import DeviceError
from ..frontier import Frontier, count_out_edges, read_counts
from ..frontier.frontier import SPARSE_SHARE
from ._keyed_kernels import MODES, PACK_PARTS, _at, keyed_columns
from .checks import snapshot, verify, verify_alike
from .contract import Contract, contract_of
from .layout import _describe, _parts, _per_cut, _run_fingerprint, owned_part, proxies
from .solo import (
    FEW_IDS,
    LEADER,
    Solo,
    is_light,
    own_edges,
    takes_part,
    under_floor,
    whole_graph,
)
from .state import allocate, gather
from .stats import Stats, Superstep, told

# Several GPUs in one process exchange through the transport (``comm.Local`` with their
# backends), which copies every message to its receiver's GPU: no kernel of one GPU reads
# another GPU's arrays (CuPy's per-device memory pools are not safe for that: lost updates on
# rmat 22); one process per GPU (NCCL, MPI) sends device buffers directly, and parts that share
# one GPU (``devices=[0, 0]``) or virtual devices hand their arrays over. A transport given
# without backends (``comm.Local(P)``: virtual devices) moves nothing: its devices are parts of
# one device (:func:`_transport`).
KEYED_SHARE = 4  # the keyed kernels list a next frontier while fewer than V / KEYED_SHARE arrive
# A package of at most these bytes (its whole buffers) crosses a link unread, where the
# transport carries counts: about 5 us over NVLink, less than the host read it spares and the
# wait for the step's kernels before it
LENT_BYTES = 1 << 20
# A power iteration's proxies cross and are applied on a second stream of the GPU, behind the
# next step's product over the entries of its own vertices (:class:`_Behind`); False: in turn
OVERLAP = True
# Over a link, the Bits (:func:`_foretold`, their one-value test with them) or the Slab
# (:func:`_chosen_unread`) that a frontier's out-edges foretell go unread, and the host
# queues the exchange behind the step's kernels; False: the output's size is read first
FORETELL = True
# A superstep whose returned vertices took one value a column but for fewer than
# 1 / MOSTLY_SHARE of them is remembered so (MOSTLY), and in the cut's later runs its large
# outputs go as Bits and an Update of those others (:class:`~bspgraph.comm.message.Mostly`)
# where that holds fewer bytes than the Slab
MOSTLY_SHARE = 16
MOSTLY = "mostly"
# Where a host read waits for the device (a GPU), those supersteps go so too, read (True),
# instead of as the Slab sent unread: on two parts of one H200 over a simulated link
# (rmat25, CC: 268 -> 11.6 MB) the reads, counts and compaction cost 0.8-1 ms a part more
# than a copy of the Slab (6.6-7.1 -> 8.7 ms); over NVLink the 128 MB a GPU spared take
# about that long: not measured yet (benchmarks.setting_ab, its True arm first: a cut keeps
# what its first run learnt)
MOSTLY_READ = False


def enact_multi(
    primitive,
    graph,
    device_ids,
    *,
    partitioner,
    communicator,
    backend,
    seed,
    transport=None,
    check=False,
    result_device=False,
    **params,
):
    """See :func:`bspgraph.enactor.enact`; runs on ``len(device_ids)`` devices.

    ``transport``: None or "local" (every device in this process), "mpi" or "nccl" (one rank
    per device; ``device_ids`` None, one, or one per rank) or a Transport. When other processes drive some
    devices, this process builds and runs only its own ones (from the whole ``graph``, or from
    the part :func:`distribute` made), reduces scalars and convergence over every process, and
    every process returns the whole result; an error on one process ends them all.
    """
    transport, backends = _transport(transport, backend, device_ids)
    first = backends[transport.local[0]]  # (parts on one GPU: each step's activation is free)
    with failing_together(transport), first.activate():  # one process: errors as they are
        result, stats = _enact(
            primitive,
            graph,
            transport,
            backends,
            partitioner,
            communicator,
            seed,
            check,
            result_device,
            params,
        )
    if result_device:  # gathered on the host (or on the one GPU of every part): to the first
        result = {
            name: value if getattr(value, "ndim", 0) == 0 else first.asarray(value)
            for name, value in result.items()
        }
    return result, stats


def _enact(
    primitive,
    graph,
    transport,
    backends,
    partitioner,
    communicator,
    seed,
    check,
    result_device,
    params,
):
    pattern = comm.get(communicator or "selective")
    started, paid = time.perf_counter(), clock.paid()  # (one-time costs apart: Stats)
    owner, devices, relabelling, built, renamed = _parts(
        primitive, graph, transport, backends, partitioner, seed
    )
    whole = _whole(primitive, graph, transport, backends, relabelling, renamed)
    for d in transport.local:  # what the steps read, built before the loop, as on one device
        with backends[d].activate():
            primitive.prepare(devices[d])
    setup_seconds = time.perf_counter() - started - clock.spent_since(paid) if built else 0.0
    if transport.distributed:  # also a barrier: the run's clock starts with every process
        transport.agree("run", _run_fingerprint(primitive, graph, owner, pattern, backends, params))
    if relabelling is not None:  # the run is in run ids: each part one id range
        params = relabelling.params(primitive, params)
    stats = Stats(devices=transport.size, setup_seconds=setup_seconds)
    started, loop_paid = time.perf_counter(), clock.paid()
    run = LiftedRun(primitive, pattern, transport, backends, owner, devices, check, whole)
    frontiers = run.first_frontiers(params)
    done = run.converged_before_start(frontiers)
    while not done:  # the lifting contract (enactor/contract.py), a superstep a turn
        step_started, step_paid = time.perf_counter(), clock.paid()
        led = run.solo.supersteps(frontiers) if run.light else None
        if led is not None:  # 6. a light frontier's supersteps on one device, while light
            frontiers, records, done = led
            records[-1].seconds += (
                time.perf_counter() - step_started - clock.spent_since(step_paid)
            ) - sum(record.seconds for record in records)  # (its changes' exchange, the wait)
            run.marks.extend([None] * len(records))
            stats.supersteps.extend(records)
            started += told(run.iteration, records)
            continue
        outputs = run.step(frontiers)  # 1. the unmodified step on every device
        messages = run.messages(outputs)  # 2. the returned vertices' communicated state
        inboxes, traffic = run.exchange(messages)  # to their owners (to all: needs_all)
        frontiers = run.combine(outputs, inboxes)  # 3. combined; the changed join the frontier
        record, done = run.tally(frontiers, outputs, inboxes, messages, traffic)  # 4, 5
        record.seconds = time.perf_counter() - step_started - clock.spent_since(step_paid)
        stats.supersteps.append(record)
        started += told(run.iteration, stats.supersteps[-1:])  # the watchers' time is not the run's
    run.time_communication(stats.supersteps)
    stats.seconds = time.perf_counter() - started - clock.spent_since(loop_paid)
    stats.iterations = run.iteration
    stats.edges = run.traversed_edges()
    gathered, gather_paid = time.perf_counter(), clock.paid()
    result = run.result(relabelling, result_device)
    transport.settle()  # (NCCL: the result's exchange, not waited for in it)
    stats.gather_seconds = time.perf_counter() - gathered - clock.spent_since(gather_paid)
    payments = clock.since(paid)  # one-time costs of this call, apart from its phases
    stats.prepare_seconds, stats.compile_seconds = payments["prepare"], payments["compile"]
    return result, stats


class LiftedRun:
    """One run of a primitive on the devices this process drives: what stays fixed over its
    supersteps (the parts, their states, which messages the contract and the link allow) and
    the phases of a superstep (:func:`_enact`'s loop), each over every local device.

    Which messages: an Update (ids and values) always; a Slab (no ids) in supersteps where
    many vertices changed, between parts in this process's memory, or across a link
    (processes, GPUs of this process; each device choosing for itself) where the pattern is
    direct and every part is one id range (``blocks``); over a link, Bits where the changed
    vertices took one value a column (``bitwise``); in one memory, packages handed to their
    receivers unread, as views (``handed``: their counts read with the next frontiers'), and
    across a link that carries counts, small packages sent unread, whole (``lent``)."""

    def __init__(
        self, primitive, pattern, transport, backends, owner, devices, check, whole=False
    ) -> None:
        self.primitive, self.pattern, self.transport = primitive, pattern, transport
        self.backends, self.devices, self.check = backends, devices, check
        self.iteration, self.joined, self.marks = 0, False, []
        local = self.local = transport.local
        self.gpus = list(dict.fromkeys(backends[d] for d in local))  # each device once
        self.staged = len(self.gpus) > 1  # several GPUs in this process
        self.shared = not (self.staged or transport.distributed)  # every state in one memory
        owners = {d: _per_cut(devices[d], owner, backends[d], backends[d].asarray) for d in local}
        # one process per device: the communicator splits by owner on that device, no copy
        self.owner = owner if self.staged else owners[local[0]]
        self.each = functools.partial(_on_each, backends if self.staged else None)
        self.states = self.each(functools.partial(allocate, primitive), devices)
        contract = self.contract = contract_of(primitive, self.states[local[0]])
        self.keyed = self.each(functools.partial(_keyed, contract), devices, self.states)
        wire = transport.wire
        dense = pattern.dense and contract.dense and (self.shared or wire and pattern.direct)
        self.blocks = _blocks(owner, devices, transport) if dense else None
        self.dense = self.blocks is not None
        self.share = backends[local[0]].capabilities.dense_share
        self.handed = self.shared and self.dense and pattern.direct and not wire
        self.bitwise = (
            self.dense and wire and pattern.direct and _bitwise(contract, self.states[local[0]])
        )
        # messages chosen from the frontiers' out-edges, where a read waits for the device
        # (a GPU): Updates they make certain, and in one memory the Slabs they foretell
        self.bounded = backends[local[0]].capabilities.costly_supersteps
        # one column that is not added: Bits and the others' ids may travel (:class:`Mostly`),
        # where a host read costs nothing, or with MOSTLY_READ
        self.excepted = _excepted(contract, self.states[local[0]])  # (its name, or None)
        self.excepting = (
            self.bitwise and (MOSTLY_READ or not self.bounded) and self.excepted is not None
        )
        # where Bits may travel, each large output is tested for one value a column (a pass
        # a column and a host read); what a test found is kept with the cut for the primitive
        # (its class and options), superstep by superstep (:attr:`tests_level`), so that a
        # superstep whose values took several (SSSP's distances, betweenness' path counts) is
        # sent untested in later runs, and one that took one value (connected components'
        # second, after its first varied) is tested and sent as Bits
        kinds = _per_cut(devices[local[0]], owner, "one value", lambda _: {})
        # superstep -> took one value (True), several (False), one but for a few (MOSTLY)
        self.levels = kinds.setdefault(_kind(primitive), {})
        self.varied = False  # whether this run's values took several a column
        self.fresh = False not in self.levels.values()  # whether they never did on the cut
        # over a link, Bits they foretell go unread too, their one-value test with them on
        # the device (:func:`_foretold`); a test that failed is caught by the tally, which
        # has those devices send their Slabs again (:meth:`resend`). Not for ``add``
        # columns, whose changes are rebased once sent.
        self.may_foretell = (
            FORETELL
            and self.bounded
            and not any(c.ships_change for c in contract.combiners.values())
        )
        self.foretold, self.guards, self.probes, self.misfired = {}, {}, {}, []
        self.others = {}  # beside a one-value test to learn from: how many took other values
        self.mostly_misfired = False  # whether the Bits that misfired held one value but a few
        # small packages cross unread, where each arrives on its receiver's device (GPUs of
        # one process: their Local transport moves it there), in a round that takes them as
        # they are (:func:`_exchange`'s mixed one: owners' ranges and a direct pattern)
        self.lent = self.dense and wire and pattern.direct and transport.carries_counts
        self.packers = self.each(
            functools.partial(
                _packer, primitive, contract, pattern, transport.size, self.handed or self.lent
            ),
            devices,
            self.keyed,
            owners,
        )
        self.packed = any(packer is not None for packer in self.packers.values())
        self.choose = functools.partial(
            _chosen_unread,
            primitive,
            contract,
            self.blocks,
            self.share,
            transport,
        )
        self.foretell = functools.partial(
            _foretold, primitive, contract, self.blocks, self.share, transport.size
        )
        # (over a link, one that moves device buffers directly: NCCL, GPUs of one process;
        # where MPI stages them through the hosts, a wrong guess's bytes cost more)
        self.slabs_foretold = self.shared and not wire or FORETELL and transport.carries_counts
        self.bases = self.unread = self.comm_started = None
        # where a device reads only the vertices its lists name, only those of a Slab cross a
        # link (in one memory a whole block is handed over as a view, which costs nothing: a
        # checked run gathers them there too, so that it sees a step that reads beyond them)
        self.gathers = self.reads = None
        to_all = self.dense and pattern.direct and primitive.needs_all
        if to_all and primitive.reads_neighbours and (wire or check):
            found = _per_cut(
                devices[local[0]],
                owner,
                "proxies",
                lambda _: proxies(transport, devices, self.blocks, self.each),
            )
            self.reads = {d: reads for d, (reads, _) in found.items()}
            self.gathers = {d: gathers for d, (_, gathers) in found.items()}
        self.behind = _Behind.of(self)
        # light supersteps on the first device (rule 6; ``whole``: the whole graph there,
        # None where this process has none, False where the primitive does not take part):
        # every process learns in the first collective whether the first device has it
        self.whole, self.solo = whole, None
        self.light = False  # whether the next superstep is one of those
        self.alone = False  # whether the whole run is (a graph under the backend's floor)
        self.params = None  # the run's parameters (a whole run alone starts from them)
        self.one_frontier = False  # whether every device's frontier is known to be the run's

    def first_frontiers(self, params: dict) -> dict:
        """Each device's first frontier (a vertex on its owner only, unless ``needs_all``) from
        the initialised state, and the baselines of the ``add`` state taken from it."""
        primitive, devices = self.primitive, self.devices
        self.params = params
        init = functools.partial(primitive.init_frontier, **params)
        frontiers = self.each(init, devices, self.states)
        if not primitive.needs_all:
            frontiers = self.each(owned_part, devices, frontiers)
        if self.bounded:  # their out-edges bound the first steps' outputs: one read here
            self.each(
                lambda graph, frontier: frontier.defer_counts(graph.cost_degrees()[0]),
                devices,
                frontiers,
            )
            read_counts(frontiers.values())
        for frontier in frontiers.values():  # no frontier was advanced from before these
            frontier.edges_before = 0
        if self.check and self.reads is not None:  # what goes stale, unread, made loud
            poison = functools.partial(_poisoned, self.contract, self.blocks)
            self.each(poison, devices, self.states, self.reads)
        self.bases = self.each(functools.partial(_bases, self.contract), devices, self.states)
        for d, keyed in self.keyed.items():  # an added follower's changes: from its baseline
            if keyed is not None:
                keyed.bases = self.bases[d]
        return frontiers

    def converged_before_start(self, frontiers: dict) -> bool:
        """Whether every device has converged before the first superstep; whether light
        supersteps may run on the first device (rule 6: it has the whole graph), and whether
        the first is one (every device's first frontier alike and light)."""
        converged = _converged(
            self.primitive, self.each, self.shared, self.devices, frontiers, self.states, 0
        )
        counts = [[int(not c), 0, 0, 0, 0, *[-1] * FEW_IDS] for c in converged.values()]
        if self.whole is not False:  # (each device's count on its own GPU)
            edges = self.each(count_out_edges, self.devices, frontiers)
            for d, row in zip(self.local, counts, strict=True):
                light = is_light(self.devices[d], edges[d])
                row[1:5] = int(light), len(frontiers[d]), edges[d], int(self.whole is not None)
                if len(frontiers[d]) <= FEW_IDS:  # (a source's: its ids, compared exactly)
                    row[5 : 5 + len(frontiers[d])] = sorted(to_host(frontiers[d].ids).tolist())
        columns = 5 + FEW_IDS
        rows = self.transport.allgather_numbers(np.array(counts).ravel()).reshape(-1, columns)
        if self.whole is not False and rows[0, 4]:  # (the first row: the first device's)
            self.solo = Solo(self, self.whole)
            alike = (rows[:, 2:4] == rows[0, 2:4]).all()  # (sizes and edges: maybe one frontier)
            # (where each device holds only its own state, light supersteps begin after a
            # lifted one: before it the first device would take every vertex's first state)
            self.light = bool(self.primitive.needs_all and rows[:, 1].all() and alike)
            # (every frontier light, whatever it is: the whole run there, from the start)
            self.alone = under_floor(self.devices[self.local[0]], self.backends[self.local[0]])
            self.light |= self.alone
            few = rows[0, 2] <= FEW_IDS and (rows[:, 5:] == rows[0, 5:]).all()
            self.one_frontier = bool(alike and few)  # (else the first device compares them)
        return not rows[:, 0].any()

    def step(self, frontiers: dict) -> dict:
        """Rule 1: the primitive's step on every device (each on its own share of the
        frontier), checked against the contract with ``check``; where the outputs' sizes are
        still on the device, bounded by the frontiers' out-edges (:func:`_bounded`)."""
        each, devices, states = self.each, self.devices, self.states
        if self.check:
            before = each(snapshot, devices, states)
            verify_alike(self.primitive, self.iteration, before)  # (this process's devices)
        stepped = functools.partial(_stepped, self.primitive, self.iteration)
        outputs = each(stepped, devices, frontiers, states)
        if self.check:
            each(
                functools.partial(verify, self.primitive, self.contract, self.iteration),
                devices,
                before,
                states,
                outputs,
            )
        if self.bounded:  # (host values only: no activation)
            outputs = {d: _bounded(devices[d], frontiers[d], outputs[d]) for d in self.local}
        if self.behind is not None:  # (a step that pulled nothing waits for them here)
            self.behind.arrivals.wait()
        return outputs

    def messages(self, outputs: dict) -> dict:
        """Rule 2: each device's message, the communicated state of the vertices it returned:
        a Slab (covering every vertex or not), Bits, or an Update. Where the step's count is
        still on a GPU, its frontier's out-edges bound it (:func:`_chosen_unread`): an Update
        they make certain that is packed on the device, or in one memory the Slab they
        foretell, goes without reading the count, so that the host queues the exchange behind
        the step's kernels."""
        contract, blocks, devices, states = self.contract, self.blocks, self.devices, self.states
        local = self.local
        if self.behind is not None:  # rule 4's scalars first: their all-reduce goes on the
            # link before the transfers and waits for none of them (the stop test reads them)
            _combine_scalars(contract, states, self.transport, self.shared)
        whole = dict.fromkeys(local)
        # (Bits first, where foretold; a superstep of one value but a few is read, to send Bits
        # and the others' ids)
        slabs = self.slabs_foretold and not self.foretells and not self.excepts
        choices = {
            d: self.choose(slabs, devices[d], states[d], outputs[d]) for d in local if self.bounded
        }
        whole.update({d: chosen for d, (_, chosen) in choices.items()})
        unread = {d for d, (known, _) in choices.items() if known}
        self.probes = {}  # (a Slab sent unread: its one-value test learnt beside it, read later)
        probed = {}
        if unread and self.learns:
            probed = {d: devices[d] for d in unread if whole[d] is not None and _marked(outputs[d])}
            probes = self.each(
                functools.partial(_level, contract), probed, states, self.bases, outputs
            )
            self.probes = {d: test for d, (test, _) in probes.items()}
        bits = {  # Bits the bound foretells: whether each covers every vertex
            d: self.foretell(devices[d], states[d], outputs[d])
            for d in local
            if self.foretells and d not in unread
        }
        self.foretold = {d: covers for d, covers in bits.items() if covers is not None}
        guarded = self.each(
            functools.partial(_guarded, contract),
            {d: devices[d] for d in self.foretold},
            states,
            self.bases,
            outputs,
        )
        self.guards = {d: test for d, (test, _) in guarded.items()}  # read with the frontiers'
        learnt = {**probed, **{d: devices[d] for d in self.foretold}}
        others = self.each(
            functools.partial(_common, self.excepted),
            learnt if self.tests_common else {},
            states,
            outputs,
        )
        self.others = {d: count for d, (count, _) in others.items()}  # (read with the tests)
        whole.update(self.foretold)
        unread.update(self.foretold)
        sized = [
            d
            for d in local
            if d not in unread
            or whole[d] is None
            and (self.packers[d] is None or outputs[d].listing is None)
        ]
        # where the bound left the choice open on a GPU, what Bits would need (how many of
        # the returned vertices are owned, and whether they took one value a column) is
        # queued now and read with the sizes: one read a GPU
        early = self.tests_level and self.bounded
        undecided = [d for d in sized if early and d not in unread and _marked(outputs[d])]
        levels = self.each(
            functools.partial(_level, contract),
            {d: devices[d] for d in undecided},
            states,
            self.bases,
            outputs,
        )
        pairs = read_counts(
            (outputs[d] for d in sized), [(self.backends[d], p) for d, (p, _) in levels.items()]
        )
        levels = {d: (pair, values) for (d, (_, values)), pair in zip(levels.items(), pairs)}
        self.learn({d: pair for d, (pair, _) in levels.items() if len(outputs[d])})
        # What follows is communication, timed on each GPU's queue (from the end of the
        # step's kernels to the end of the exchange's): this process does not wait here.
        self.comm_started = [backend.mark() for backend in self.gpus]
        large = [
            d
            for d in local
            if d not in unread
            and self.dense
            and _many(
                contract,
                blocks,
                self.share,
                self.transport,
                self.tests_level or self.excepts,  # (Bits, or Bits and ids, only where tested)
                devices[d],
                states[d],
                outputs[d],
            )
        ]
        levels, mostly = _dense_choices(self, outputs, large, whole, levels) if large else ({}, {})
        levels.update({d: values for d, (_, values) in guarded.items()})
        if not self.pattern.direct and None in whole.values():  # one kind for every device
            whole, levels, mostly = dict.fromkeys(local), {}, {}
            read_counts(outputs.values())  # (those bounded)
        messages = self.each(
            functools.partial(_message, contract, blocks, levels=levels, mostly=mostly),
            devices,
            states,
            self.bases,
            self.packers,
            outputs,
            whole,
        )
        if self.packed and not self.handed:  # every part's counts by owner, and its output's
            messages = _unpacked(self.backends, messages, outputs, self.lent)  # (one read)
        self.unread = [m for m in messages.values() if isinstance(m, Packed)]
        return messages

    def exchange(self, messages: dict) -> tuple[list, object]:
        """Every device's message through the communicator to its receivers (the owners of
        its vertices; every device where the primitive ``needs_all``): the inboxes and the
        exchange's counts."""
        exchange = self.exchanging(messages)
        if self.behind is not None:  # its transfers on the second stream (marked after combine)
            return self.behind.exchange(exchange)
        received, traffic = exchange()
        self.marks.append((self.comm_started, [backend.mark() for backend in self.gpus]))
        if self.handed:  # Pieces beside Slabs are applied as Updates: their counts, read at once
            _learned(
                [
                    m.packed
                    for inbox in received
                    if inbox and any(isinstance(m, Slab) for m in inbox)
                    for m in inbox
                    if isinstance(m, Piece)
                ]
            )
        return received, traffic

    def exchanging(self, messages: dict):
        """The exchange of ``messages`` over this run's communicator (:func:`_exchange`), to
        call."""
        return functools.partial(
            _exchange,
            self.primitive,
            self.contract,
            self.pattern,
            self.transport,
            messages,
            self.owner,
            self.blocks,
            self.gathers,
        )

    def combine(self, outputs: dict, received: list) -> dict:
        """Rule 3: every inbox combined into its device's state; each device's next frontier
        (:func:`_next_frontier`), its size (and the unread packages' counts) read at once. A
        power iteration's proxies are combined on the second stream (:class:`_Behind`)."""
        if self.behind is None:
            return self._combined(outputs, received)
        frontiers, mark = self.behind.combine(functools.partial(self._combined, outputs, received))
        self.marks.append((self.comm_started, [mark]))
        return frontiers

    def _combined(self, outputs: dict, received: list) -> dict:
        frontiers = self.each(
            functools.partial(
                _next_frontier_counted,
                self.primitive,
                self.contract,
                self.blocks,
                self.iteration + 1,
                self.bounded,
            ),
            self.devices,
            self.states,
            self.bases,
            self.keyed,
            outputs,
            dict(enumerate(received)),
            self.reads,
        )
        crossed = [m.packed for inbox in received if inbox for m in inbox if _crossed(m)]
        unread = [m for m in [*self.unread, *crossed] if not m.known]  # (beside Slabs: read)
        counted = read_counts(
            [*frontiers.values(), *outputs.values()],
            [
                *((backend_of(m.counts), m.counts) for m in unread),
                *((self.backends[d], test) for d, test in self.guards.items()),
                *((self.backends[d], test) for d, test in self.probes.items()),
                *((self.backends[d], count) for d, count in self.others.items()),
            ],
        )
        for package, counts in zip(unread, counted):  # one read a GPU (the tests after)
            package.learn(counts)
        tested = [*self.guards, *self.probes]
        tests = dict(zip(tested, counted[len(unread) : len(unread) + len(tested)], strict=True))
        others = {  # (each a count, and the vertices returned)
            d: (count[0], len(outputs[d]))
            for d, count in zip(self.others, counted[len(unread) + len(tested) :], strict=True)
        }
        self.misfired = [d for d in self.guards if not tests[d][1] and len(outputs[d])]
        if self.probes:  # (learnt where Bits are not foretold: no guards then)
            self.learn({d: tests[d] for d in self.probes if len(outputs[d])}, others)
        elif tests and not self.misfired:  # (a misfire anywhere: the tally's resend)
            self.one_value(self.iteration)
        self.mostly_misfired = bool(self.misfired) and self._few(
            {d: tests[d] for d in self.misfired}, others
        )
        if any(frontier.is_dense for frontier in frontiers.values()):
            frontiers = self.each(_few_as_ids, self.devices, frontiers)
        for d in self.local:  # it goes on from the step's output
            frontiers[d].edges_before = outputs[d].edges_before
        return frontiers

    @property
    def tests_level(self) -> bool:
        """Whether this superstep's large outputs are tested for one value a column (Bits):
        where it took one in an earlier run on the cut, or where that is not known yet, unless
        this is the first run whose values varied (its later supersteps go untested: they
        are learnt, each once, in the cut's next run)."""
        known = self.levels.get(self.iteration)
        untried = known is None and not (self.varied and self.fresh)
        return self.bitwise and (known is True or untried)

    @property
    def excepts(self) -> bool:
        """Whether this superstep's large outputs may go as Bits and the others' ids
        (:class:`Mostly`): it took one value but for a few in an earlier run on the cut."""
        return self.excepting and self.levels.get(self.iteration) == MOSTLY

    @property
    def tests_common(self) -> bool:
        """Whether a one-value test of this superstep is learnt from with how many returned
        vertices took another value than the commonest (:func:`_common`): one column that is
        not added, at a superstep not known yet or known to take one but for a few."""
        return self.excepting and self.levels.get(self.iteration) in (None, MOSTLY)

    @property
    def foretells(self) -> bool:
        """Whether this superstep's Bits may be foretold (sent before their test is read):
        where it took one value in an earlier run on the cut, or where the primitive's values
        never varied there. A superstep not known yet, of a primitive whose values varied
        elsewhere, is tested beside the Slab it sends (:attr:`learns`)."""
        known = self.levels.get(self.iteration)
        return self.may_foretell and self.tests_level and (known is True or self.fresh)

    @property
    def learns(self) -> bool:
        """Whether a Slab this superstep sends unread (:func:`_chosen_unread`) has its
        one-value test queued beside it and read with the next frontiers, to be known in the
        cut's later runs: a superstep not known yet, of a primitive whose values varied in
        another one (the Slab goes as it would: nothing waits for the test)."""
        return self.may_foretell and self.tests_level and not self.foretells

    def learn(self, pairs: dict, others: dict | None = None) -> None:
        """From each device's one-value test of a returned vertex or more (``pairs``: its
        owned count and 1 or 0, read; 0 also where none is returned): where one took several
        values a column, :meth:`varies` (Bits would not carry them), unless on every such
        device fewer than 1 / MOSTLY_SHARE of its returned vertices took another than the
        commonest (``others``: those two counts, read; :meth:`mostly`); else the superstep is
        known to take one (:meth:`one_value`)."""
        if any(not one for _, one in pairs.values()):
            if self._few(pairs, others or {}):
                self.mostly(self.iteration)
            else:
                self.varies(self.iteration)
        elif pairs:
            self.one_value(self.iteration)

    @staticmethod
    def _few(pairs: dict, others: dict) -> bool:
        """Whether on every device of ``pairs`` whose test failed fewer than 1 / MOSTLY_SHARE
        of its returned vertices took another value than the commonest (``others``: the two
        counts, read)."""
        apart = [d for d, (_, one) in pairs.items() if not one]
        return all(d in others and others[d][0] * MOSTLY_SHARE < others[d][1] for d in apart)

    def mostly(self, superstep: int) -> None:
        """The values of ``superstep`` took one a column but for a few: kept with the cut,
        unless some device found them varied."""
        if self.levels.get(superstep) is not False:
            self.levels[superstep] = MOSTLY

    def one_value(self, superstep: int) -> None:
        """The values of ``superstep`` took one a column (every test of it read): kept with
        the cut, unless some device found several."""
        self.levels.setdefault(superstep, True)

    def varies(self, superstep: int) -> None:
        """The values of ``superstep`` took several a column: no one-value test and no
        foretold Bits at that superstep in the cut's later runs of the primitive, nor for the
        rest of this run where it is the first on the cut whose values varied (else the rest
        still learns what it does not know)."""
        self.varied = True
        self.levels[superstep] = False

    def tally(
        self, frontiers, outputs, received, messages, traffic, *, again: bool = False
    ) -> tuple[Superstep, bool]:
        """Rules 4 and 5: scalars combined over devices, each device's ``converged``, and the
        superstep's tally summed over processes in one collective (frontier sizes, traffic,
        devices still running, what the next direction test reads: :func:`_union_edges`).
        The superstep's record (its ``seconds`` left to the caller) and whether the run is
        over. Where foretold Bits misfired on some device (:meth:`resend`), ``frontiers``
        take the vertices their Slabs changed, and the tally is taken ``again`` (received
        None: what arrived is not one round's)."""
        primitive, transport, devices, local = (
            self.primitive,
            self.transport,
            self.devices,
            self.local,
        )
        traffic = traffic.settled()
        if not primitive.needs_all:
            union = {}
        elif received is None:
            union = dict.fromkeys(local)
        else:
            union = self.each(_union_edges, devices, frontiers, outputs, dict(enumerate(received)))
        vertices = _distinct(transport, self.each, devices, frontiers) if self.check else None
        own = {}  # (rule 6 where the frontiers are not known to be one: their out-edges, as
        # counted by each device, or with needs_all by those whose frontier is not plainly the
        # union of the returned vertices: one frontier, if the first device finds it so)
        if self.solo is not None and not (primitive.needs_all and self.solo.joined_only):
            counting = [d for d in local if union.get(d) is None]
            own = self.each(own_edges, {d: devices[d] for d in counting}, frontiers)
        sync_started = time.perf_counter()
        if self.behind is None and not again:
            _combine_scalars(self.contract, self.states, transport, self.shared)
        self.iteration += 0 if again else 1
        converged = _converged(
            primitive, self.each, self.shared, devices, frontiers, self.states, self.iteration
        )
        counts = [
            *_formats(messages.values()),
            sum(len(f) for f in frontiers.values()),
            traffic.messages,
            traffic.bytes,
            sum(not c for c in converged.values()),
            sum(len(o) for o in outputs.values()),
            sum(e is not None for e in union.values()),
            sum(e or 0 for e in union.values()),
            sum(o.pulled_from is not None for o in outputs.values()),
            sum(e is None for e in own.values()),
            len(own),
            sum(e or 0 for e in own.values()),
            len(self.misfired),
        ]
        (
            *formats,
            size,
            sent,
            nbytes,
            running,
            returned,
            unions,
            edges,
            pulled,
            uncounted,
            counted,
            owns,
            misfired,
        ) = _sum(transport, counts)  # one collective a superstep
        if misfired:  # (every process alike) Slabs for the Bits that misfired, then again
            resent, more = self.resend(frontiers, outputs)
            sent = dict(enumerate([*messages.values(), *resent.values()]))
            return self.tally(frontiers, outputs, None, sent, traffic + more, again=True)
        alike = self.joined and pulled == transport.size  # one frontier in, every device pulled
        self.joined = self.one_frontier = (
            unions == transport.size and size == transport.size * returned
        )
        if self.joined:  # the run's frontier's out-edges, where counted
            whole = edges
        elif uncounted or not counted:
            whole = None
        else:  # (needs_all: each one's frontier the run's, if the first device finds them one)
            whole = owns // counted if primitive.needs_all else owns
        if self.joined:  # every device's frontier is every returned vertex, once: the tally's
            for d in local:
                frontiers[d].out_edges = edges
                frontiers[d].pulled_from = outputs[d].pulled_from if alike else None
        first = frontiers[local[0]] if self.joined else None  # (alike on every device)
        self.light = self.solo is not None and is_light(devices[local[0]], whole, first)
        sync_seconds = time.perf_counter() - sync_started
        done = running == 0
        if self.check and not done:  # a checked run that never settles fails: checks.Watch
            self.check.superstep(self.iteration, devices, self.states, frontiers, converged)
        record = Superstep(
            size,
            0.0,
            devices=transport.size,
            messages=sent,
            bytes=nbytes,
            rounds=traffic.rounds,
            sync_seconds=sync_seconds,
            formats=tuple(kind for kind, n in zip(FORMATS, formats, strict=True) if n),
            vertices=vertices,
        )
        return record, done

    def resend(self, frontiers: dict, outputs: dict):
        """Foretold Bits that misfired (their vertices did not take one value a column, as
        read with the next frontiers: the receivers applied nothing of them,
        :func:`_guarded`) sent again as each such device's Slab, in a round every process
        makes; the vertices they change join ``frontiers`` (in place), and the run's values are
        known to vary (:meth:`varies`). Those Slabs and the round's counts."""
        misfired, self.misfired = set(self.misfired), []
        if self.mostly_misfired:  # (on every process: each makes this round; the tally
            self.mostly(self.iteration - 1)  # counted the superstep already)
        else:
            self.varies(self.iteration - 1)
        messages = self.each(
            functools.partial(_resent, self.contract, self.blocks, misfired, self.foretold),
            self.devices,
            self.states,
            self.bases,
            outputs,
        )
        received, traffic = self.exchanging(messages)()
        changed = self.each(
            functools.partial(
                _next_frontier_counted,
                self.primitive,
                self.contract,
                self.blocks,
                self.iteration,
                self.bounded,
            ),
            self.devices,
            self.states,
            self.bases,
            self.keyed,
            {d: Frontier.empty(self.devices[d]) for d in self.local},
            dict(enumerate(received)),
            self.reads,
        )
        frontiers.update(
            self.each(functools.partial(_joined, self.bounded), self.devices, frontiers, changed)
        )
        read_counts(frontiers.values())
        return {d: messages[d] for d in misfired if d in messages}, traffic

    def time_communication(self, supersteps: list) -> None:
        """Each superstep's ``comm_seconds`` from the marks on its GPUs' queues (the longest
        of this process's GPUs'), read once after the run."""
        for backend in self.gpus:
            backend.synchronize()
        if self.behind is not None:  # (every queue done: nothing is on its way)
            self.behind.arrivals.pending = None
        for superstep, marks in zip(supersteps, self.marks, strict=True):
            if marks is not None:  # (None: a superstep on one device, nothing exchanged)
                superstep.comm_seconds = max(
                    backend.seconds_between(start, end)
                    for backend, start, end in zip(self.gpus, *marks)
                )

    def traversed_edges(self) -> int:
        """The edges the run traversed, summed over every device (the first device's on
        the whole graph, where the run ended there alone: rule 6)."""
        if self.solo is not None and self.solo.ended:
            (edges,) = _sum(self.transport, [self.solo.traversed_edges()])
            return edges
        traversed = self.each(self.primitive.traversed_edges, self.devices, self.states)
        (edges,) = _sum(self.transport, [sum(int(edges) for edges in traversed.values())])
        return edges

    def result(self, relabelling, result_device: bool) -> dict:
        """Each vertex's output state from its owner (every process returns the whole, or
        only the transport's ``result_rank``, the others an empty one), in the caller's ids;
        host arrays unless ``result_device``."""
        primitive, devices, states = self.primitive, self.devices, self.states
        alone = self.solo is not None and self.solo.ended  # (the first device's state: whole)
        if self.transport.distributed:
            to = self.transport.result_rank
            _share_owned(primitive, devices, states, self.transport, alone=alone, to=to)
            if to is not None and self.transport.rank != to:
                return {}
            result = gather(primitive, states[self.local[0]], host=not result_device)
        elif alone:
            host = relabelling is None and not result_device
            result = gather(primitive, states[LEADER], host=host)
        elif relabelling is None:
            result = _gather(primitive, devices, states, host=not result_device)
        else:  # renamed where the first part's arrays are (a GPU's gathers), then copied if asked
            result = _gather(primitive, devices, states, host=False)
        if relabelling is not None:  # back in the caller's ids
            result = relabelling.results(primitive, result)
            if not (result_device or self.transport.distributed):
                result = {
                    name: to_host(value) if getattr(value, "ndim", 0) else value
                    for name, value in result.items()
                }
        return result


class _Behind:
    """A power iteration's proxies (the Gathered Slabs that each receiver reads through its
    lists only, ``reads_neighbours``) crossing on a second stream of this process's one GPU:
    the NCCL transport's transfers queue there behind this stream's step, scalars and
    gathers (:attr:`NCCLTransport.stream`), and so does their combine into the state; the
    part's ``context.arrivals`` makes its next pull wait for them after it has summed the
    entries of its own vertices (:func:`~bspgraph.frontier.operators.neighbor_reduce`), and a
    step that pulled nothing waits after it. Gunrock's overlap of communication with the
    computation that does not need it; on two H200 the transfer and combine of PageRank's
    proxies (56.6 MB a rank at rmat25) took ~0.4 ms of a ~5.4 ms iteration."""

    def __init__(self, backend, transport, arrivals) -> None:
        self.cuda = backend.xp.cuda
        self.side = self.cuda.Stream(non_blocking=True)
        self.transport, self.arrivals = transport, arrivals

    @classmethod
    def of(cls, run: LiftedRun) -> _Behind | None:
        """Where ``run`` lets its proxies cross behind: a power iteration whose proxies are
        gathered, one GPU a process over a transport with a stream for its transfers."""
        transport, primitive = run.transport, run.primitive
        if not (OVERLAP and run.gathers is not None and primitive.every_vertex):
            return None
        if not transport.streams or len(run.local) != 1 or run.check:
            return None
        (device,) = run.local
        return cls(run.backends[device], transport, run.devices[device].context.arrivals)

    def exchange(self, exchange):
        """``exchange()`` with the transport's transfers on the second stream."""
        self.transport.stream = self.side
        try:
            return exchange()
        finally:
            self.transport.stream = None

    def combine(self, combine):
        """``combine()`` on the second stream (its result), and the mark of its end there;
        the next pull of the others' entries waits for it."""
        main = self.cuda.get_current_stream()
        with self.side:
            frontiers = combine()
            done = self.side.record()
        self.arrivals.pending = functools.partial(main.wait_event, done)
        return frontiers, done


def _dense_choices(
    run: LiftedRun, outputs: dict, large: list, whole: dict, read: dict
) -> tuple[dict, dict]:
    """For the devices that returned many vertices (``large``, :func:`_many`), whether each
    sends a Slab and over what (set in ``whole``, :func:`_dense_choice`), from how many of its
    returned vertices it keeps at home and, over a wire where Bits may travel, whether they
    took one value a column (:func:`_level`, while the run tests: :meth:`LiftedRun.learn`;
    ``read`` holds those already read) and how many took another than the commonest
    (:func:`_common`, where the run learns or uses it): read at once. The one value a column
    of those that took one, and the commonest of those that send Bits and the others' ids
    (:class:`Mostly`: fewer bytes than their Slab)."""
    devices, states, contract = run.devices, run.states, run.contract
    on = {d: devices[d] for d in large if d not in read}
    tested = on if run.tests_level else {}
    levels = run.each(functools.partial(_level, contract), tested, states, run.bases, outputs)
    counted = run.each(_owned_count, {d: g for d, g in on.items() if d not in tested}, outputs)
    common = {d: devices[d] for d in large} if run.tests_common else {}
    common = run.each(functools.partial(_common, run.excepted), common, states, outputs)
    found = _read_each(
        {**run.backends, **{("others", d): run.backends[d] for d in common}},
        {
            **{d: p for d, (p, _) in levels.items()},
            **counted,
            **{("others", d): count for d, (count, _) in common.items()},
        },
    )
    others = {d: found[("others", d)] for d in common}
    apart = {d: (others[d], len(outputs[d])) for d in others}  # (and the vertices returned)
    run.learn({d: found[d] for d in levels}, apart)  # (those read before, learnt from then)
    pairs = {d: found[d] for d in levels} | {d: pair for d, (pair, _) in read.items()}
    levels = {d: values for d, (_, values) in {**levels, **read}.items() if pairs[d][1]}
    kept = {d: pairs[d][0] if d in pairs else found[d] for d in large}
    wire = run.transport.wire
    mostly = {}
    for d in large:
        entry = _entry_bytes(contract, run.blocks, devices[d], states[d]) if wire else None
        returned, graph = len(outputs[d]), devices[d]
        whole[d] = _dense_choice(
            run.primitive, contract, run.share, run.transport.size, graph, returned, kept[d],
            entry, d in levels,
        )  # fmt: skip
        if run.excepts and d in others and d not in levels:
            excepted = _mostly_choice(
                run.primitive, contract, graph, entry, returned, kept[d], whole[d], others[d]
            )
            if excepted is not None:
                whole[d], mostly[d] = excepted, (common[d][1], others[d])
    return levels, mostly


def _distinct(transport, each, devices, frontiers) -> int:
    """How many distinct vertices the devices' frontiers hold together (a checked run's count:
    one device's frontier size, where every device's is the same level); each frontier's ids
    made on its own device (``each``), where a mask's are made and kept."""
    ids = list(each(lambda graph, frontier: to_host(frontier.ids), devices, frontiers).values())
    if transport.distributed:
        ids = [part for parts in transport.allgather(ids) for part in parts]
    return int(np.unique(np.concatenate(ids)).size) if ids else 0


FORMATS = ("ids", "slab", "bits", "bits+ids")  # what a device's message may be: Superstep.formats


def _formats(messages) -> list[int]:
    """How many of ``messages`` went as ids (an Update, or one packed on the device), as a
    Slab, as Bits and as Bits and ids (Mostly), in the order of FORMATS."""
    kinds = [
        FORMATS[3] if isinstance(m, Mostly)
        else FORMATS[2] if isinstance(m, Bits)
        else FORMATS[1] if isinstance(m, Slab)
        else FORMATS[0]
        for m in messages
    ]  # fmt: skip
    return [kinds.count(kind) for kind in FORMATS]


def _whole(primitive, graph, transport, backends, relabelling, renamed):
    """The whole graph for rule 6 (:mod:`.solo`) on the first device, where this process
    drives it and has it (``renamed``: in run ids on the host, where the cut just made it;
    else None); else None (the first collective tells every process); False where the
    primitive does not take part."""
    if not (takes_part(primitive) or under_floor(graph, backends[transport.local[0]])):
        return False
    if LEADER not in transport.local:
        return None
    whole = whole_graph(primitive, graph, backends[LEADER], relabelling, renamed)
    if whole is not None:
        primitive.prepare(whole)
    return whole


def _converged(primitive, each, shared: bool, devices, frontiers, states, iteration: int) -> dict:
    """Each device's ``converged``; with ``every_vertex`` in one memory (``shared``), the first
    device's for all: it reads only scalars, combined alike on every device (one read of
    PageRank's L1 change a superstep, not one a part). A vote to halt (``votes_to_halt``)
    holds once the device's frontier is empty too: then nothing is left to send to it."""
    if shared and primitive.every_vertex:
        first = next(iter(devices))
        done = primitive.converged(devices[first], frontiers[first], states[first], iteration)
        return dict.fromkeys(devices, done)
    votes = each(primitive.converged, devices, frontiers, states, iteration)
    if not primitive.votes_to_halt:
        return votes
    return {d: vote and not frontiers[d] for d, vote in votes.items()}


def _exchange(
    primitive,
    contract: Contract,
    pattern,
    transport,
    messages: dict,
    owner,
    blocks,
    gathers: dict | None,
):
    """Each device's message (an Update or a Slab) through ``pattern``: in one round where
    the pattern is direct and Slabs may travel (``blocks``), each device's as it chose (a
    Slab sent to all as each receiver's proxies only, where ``gathers`` has them); else
    every device's Slab, or every device's Update. The inboxes and the exchange's counts."""
    sent = [messages.get(d) for d in range(transport.size)]
    if blocks is not None and pattern.direct:
        return pattern.exchange_mixed(
            sent,
            owner=owner,
            blocks=blocks,
            to_all=primitive.needs_all,
            transport=transport,
            gathers=gathers,
        )
    if all(isinstance(message, Slab) for message in messages.values()):
        return pattern.exchange_dense(
            sent, blocks=blocks, to_all=primitive.needs_all, transport=transport
        )
    return pattern.exchange(
        sent,
        owner=owner,
        to_all=primitive.needs_all,
        transport=transport,
        combine=ContractCombine(contract),
    )


def run_backend(graph, run: dict) -> Backend:
    """The backend of a run of ``graph`` with the options ``run`` (``backend``,
    ``transport``) in this process: over a transport of processes ("mpi", "nccl", made here
    as the run makes it), its rank's device; else :func:`~bspgraph.backend.backend_for`'s.
    What a primitive's own work around its runs takes (sums, batch sizes): on rank 1, its GPU,
    not the current device of a process that has made no transport yet (GPU 0)."""
    transport, name = run.get("transport"), run.get("backend")
    if transport in ("mpi", "nccl"):
        transport = _named(transport, name)
    if isinstance(transport, comm.Transport) and transport.distributed:
        return transport.backend
    return backend_for(name, graph)


def _transport(transport, backend, device_ids) -> tuple[comm.Transport, dict]:
    """The Transport, and the Backend of each device it drives in this process."""
    if transport is None or transport == "local":
        backends = _backends(backend, device_ids or [0])
        return comm.Local(backends), dict(enumerate(backends))
    if transport in ("mpi", "nccl"):
        transport = _named(transport, backend)
    if not isinstance(transport, comm.Transport):
        raise ValueError(
            f"transport={transport!r}: expected 'local', 'mpi', 'nccl' or a Transport instance"
        )
    if not transport.distributed:
        if device_ids is not None and len(device_ids) != transport.size:
            raise DeviceError(
                f"devices={device_ids}: transport {transport!r} has {transport.size} devices"
            )
        backends = _backends(backend, device_ids or list(range(transport.size)))
        if getattr(transport, "backends", None) is None and len(set(backends)) > 1:
            if device_ids is not None:  # (a kernel of one GPU would read another's arrays)
                raise DeviceError(
                    f"devices={device_ids}: transport {transport!r} holds virtual devices, "
                    "which hand their messages over in one memory, and these are several "
                    "GPUs: build it from their backends (comm.Local([backend.on_device(d) "
                    "for d in devices])), or leave it out"
                )
            backends = _backends(backend, [0] * transport.size)  # its devices: parts of one
        return transport, dict(enumerate(backends))
    if device_ids is not None and len(device_ids) not in (1, transport.size):
        raise DeviceError(
            f"devices={device_ids}: transport {transport!r} has one device per process, "
            f"{transport.size} in all; leave devices out (or pass {transport.size})"
        )
    return transport, {d: transport.backend for d in transport.local}


_NAMED: dict = {}  # (kind, backend) -> this process's transport, made by the first run naming it


def _named(kind: str, backend) -> comm.Transport:
    """This process's transport of ``kind`` ("mpi" or "nccl", over every rank), made by the
    first run that names it and kept for the next ones, as a caller keeps one: each made
    afresh would start a watchdog thread and an MPI communicator, and for NCCL a communicator
    of its own (38 ms a run on two H200)."""
    key = (kind, getattr(backend, "name", backend), getattr(backend, "device", None))
    if key not in _NAMED:
        if kind == "mpi":
            from ..comm.mpi import MPITransport

            _NAMED[key] = MPITransport(backend=backend)
        else:
            from ..comm.nccl import NCCLTransport

            _NAMED[key] = NCCLTransport()
    return _NAMED[key]


def _backends(name, device_ids):
    backend = get_backend(name)
    return [backend.on_device(d) for d in device_ids]  # (virtual devices: one backend)


def _poisoned(contract: Contract, blocks, graph, state, reads: dict) -> None:
    """A checked run's entries that go stale on this device (communicated floats of the
    vertices it neither owns nor names in its lists, ``reads_neighbours``) set to NaN, so
    that a step that reads beyond its lists gives NaN, not a quietly stale value."""
    kept = graph.xp.zeros(graph.num_vertices, dtype=bool)
    kept[blocks[graph.context.device]] = True
    for ids in reads.values():
        kept[ids] = True
    for name in contract.combiners:
        array = getattr(state, name)
        if array is not None and array.dtype.kind == "f":
            array[~kept] = np.nan


def _owned_mask(graph, frontier: Frontier):
    """A new bool mask of the ``frontier`` vertices that ``graph``'s device owns: where it owns
    a range, the frontier's mask over the range (``Backend.within``: no pass over every vertex
    on the GPU)."""
    index = graph.owned_index()
    if isinstance(index, slice):
        return ops.within(graph.backend, frontier.mask, index)
    return frontier.mask & graph.context.owned


def _combine_scalars(contract: Contract, states, transport, shared: bool) -> None:
    """Every scalar replaced, on every device, by its combiner's reduction over all devices:
    with one device a process, in place on the device where the transport can (NCCL's
    all-reduce: no host read, the GPU not left waiting for the host between supersteps);
    else the scalars read together (one host read a GPU), then one buffer collective of their
    bits (a float's travel as int64, exactly); or, when every device's state is in one memory
    (``shared``: parts on one GPU, virtual devices), the reduction of the scalars' arrays
    there, with no read to the host."""
    if not contract.scalars:
        return
    if len(states) == 1 and not shared:
        (state,) = states.values()
        pairs = [(getattr(state, name), c.name) for name, c in contract.scalars.items()]
        if transport.reduce_in_place(pairs):
            return
    if shared:
        for name, combiner in contract.scalars.items():
            scalars = [getattr(s, name) for s in states.values()]
            total = combiner.reduce(scalars)
            for scalar in scalars:
                scalar[...] = total
        return
    names = list(contract.scalars)
    local = [[getattr(s, name) for s in states.values()] for name in names]
    scalars = [value for values in local for value in values]
    read = read_together([(backend_of(value), value) for value in scalars])  # one read a GPU
    bits = np.array(
        [_to_bits(v[0], s.dtype) for v, s in zip(read, scalars, strict=True)],
        dtype=np.int64,
    )
    rows = transport.allgather_numbers(bits).reshape(-1, len(names), len(states))
    for k, (name, combiner) in enumerate(contract.scalars.items()):
        dtype = local[k][0].dtype
        total = combiner.reduce([_from_bits(b, dtype) for b in rows[:, k, :].ravel().tolist()])
        for s in states.values():
            scalar = getattr(s, name)
            with backend_of(scalar).activate():  # on the scalar's own GPU
                scalar[...] = total


def _to_bits(value, dtype: np.dtype) -> int:
    """A scalar's value (read from its 0-d array of ``dtype``) as an int64: a float's bits
    (as float64), else the integer."""
    return int(np.float64(value).view(np.int64)) if dtype.kind == "f" else int(value)


def _from_bits(bits: int, dtype: np.dtype):
    return np.int64(bits).view(np.float64).item() if dtype.kind == "f" else bits


def _sum(transport, numbers: list) -> list:
    """Element-wise sums of the integers ``numbers`` over the processes (one buffer
    collective, nothing pickled)."""
    rows = transport.allgather_numbers(numbers).tolist()  # (a few: summed as Python ints)
    return [sum(column) for column in zip(*rows, strict=True)]


def _on_each(backends, fn, devices: dict, *per_device_and_constants):
    """``fn(devices[d], *(a[d] for per-device dicts a), *constants)`` for every device d in
    ``devices``, with d's GPU current (``backends`` None: this process's one GPU, current
    for the whole run); a dict of the results."""
    results = {}
    for d in devices:
        args = [a[d] if isinstance(a, dict) else a for a in per_device_and_constants]
        if backends is None:
            results[d] = fn(devices[d], *args)
            continue
        with backends[d].activate():
            results[d] = fn(devices[d], *args)
    return results


def _bases(contract: Contract, graph, state) -> dict:
    """Copies of the ``add`` state, against which a device's changes in a superstep are
    measured (kept equal to the state at every vertex a superstep touched)."""
    return {
        name: graph.backend.copy(getattr(state, name))
        for name, combiner in contract.combiners.items()
        if combiner.ships_change and getattr(state, name) is not None
    }


def _package(contract: Contract, graph, state, bases, packer, output: Frontier) -> Update | Packed:
    """The communicated state of the ``output`` vertices (the change since the last superstep,
    for ``add``); owners only send when the combiners are ``replace``. With a ``packer``
    (:func:`_packer`), grouped by owner, its counts by owner still on the device (Packed)."""
    if output.size_known and not len(output):  # nothing changed here: empty views, no kernel
        return Update(
            output.ids,
            {
                name: getattr(state, name)[:0]
                for name in contract.names
                if getattr(state, name) is not None
            },
        )
    packed = None if packer is None else packer(*(output.listing or (output.ids,)))
    if packed is not None:  # (a list still counted on the device: packed as it is, bounded)
        return Packed(packed.ids, packed.values, packed.counts, at_most=_at_most(output))
    if not contract.owner_only:
        ids = output.ids
    elif output.is_dense:  # one pass over the mask (PageRank's every owned vertex)
        ids = graph.xp.flatnonzero(output.mask & graph.context.owned).astype(graph.indices.dtype)
    else:
        ids = output.ids[graph.context.owned[output.ids]]
    values = {}
    for name in contract.names:
        array = getattr(state, name)
        if array is not None:
            values[name] = array[ids] - bases[name][ids] if name in bases else array[ids]
    return Update(ids, values)


def _concat(a: Update, b: Update) -> Update:
    xp = backend_of(a.ids).xp
    values = {name: xp.concatenate([a.values[name], b.values[name]]) for name in a.values}
    return Update(xp.concatenate([a.ids, b.ids]), values)


class ContractCombine:
    """The exchange's ``combine`` for a contract: two Updates concatenated and merged
    (:func:`merge`); :meth:`many` combines several pairs at once, every pair's count of ids
    read together (one host read a device, where each merge would read its own)."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract

    def __call__(self, a: Update, b: Update) -> Update:
        (merged,) = self.many([(a, b)])
        return merged

    def many(self, pairs: list[tuple[Update, Update]]) -> list[Update]:
        joined = []
        for a, b in pairs:
            with backend_of(a.ids).activate():
                joined.append(_concat(a, b))
        return merge(self.contract, *joined)


def merge(contract: Contract, *updates: Update) -> list[Update]:
    """For each of ``updates``: one entry per id, each column by its combiner; entries of a
    ``follows`` state are those of the key's winner (or, for ``add``, its ties). Each on its
    device (made current); every update's count of ids read at once (one host read a device),
    then every column is a gather."""
    sorted_ = []
    for update in updates:
        backend = backend_of(update.ids)
        with backend.activate():
            sorted_.append(_sorted_by_id(contract, update))
    pending = [
        (backend_of(u.ids), s[-1])
        for u, s in zip(updates, sorted_, strict=True)
        if s is not None and not isinstance(s[-1], int | np.integer)
    ]
    read = iter(read_together(pending))
    merged = []
    for update, ordered in zip(updates, sorted_, strict=True):
        if ordered is None:  # no entry
            merged.append(update)
            continue
        count = ordered[-1]
        count = int(count) if isinstance(count, int | np.integer) else next(read)[0]
        with backend_of(update.ids).activate():
            merged.append(_merged(contract, update, *ordered[:-1], count))
    return merged


def _sorted_by_id(contract: Contract, update: Update):
    """``update``'s entries ordered by id (within an id the key's best first): the order, the
    ids, the first entry of each id (a mask), each entry's id number and how many ids (a
    count on the device); None without entries."""
    backend = backend_of(update.ids)
    xp = backend.xp
    if update.ids.size == 0:
        return None
    key = contract.key
    order = xp.arange(update.ids.size)
    if key is not None and key in update.values:  # the key's best first within each id
        value = update.values[key]
        best_first = -value if contract.combiners[key].name == "max" else value
        order = xp.argsort(best_first, kind="stable")
    order = order[xp.argsort(update.ids[order], kind="stable")]
    ids = update.ids[order]
    starts = xp.ones(ids.size, dtype=bool)
    starts[1:] = ids[1:] != ids[:-1]
    return order, ids, starts, xp.cumsum(starts) - 1, backend.count(starts)


def _merged(contract: Contract, update: Update, order, ids, starts, segment, count: int) -> Update:
    """:func:`merge` of ``update`` from its order by id (:func:`_sorted_by_id`) and its
    ``count`` of ids, read."""
    backend = backend_of(update.ids)
    key = contract.key
    first = backend.nonzero(starts, np.int64, count)
    tied = None
    if key is not None and key in update.values:
        ranked = update.values[key][order]
        tied = ranked == ranked[first][segment]
    values = {}
    for name, column in update.values.items():
        combiner = contract.combiners[name]
        if name == key:  # sorted best first: the key's winner is each id's first entry
            values[name] = column[order][first]
            continue
        values[name] = combiner.merge(
            backend, column[order], segment, count, first, tied if combiner.follows else None
        )
    return Update(ids[first], values)


def _blocks(owner, devices, transport) -> list | None:
    """Each device's owned vertices as an index (a slice for a range, else ids), every device
    in this process's memory; across a link (processes, GPUs of this process), the range each
    device owns, or None where some device owns no range."""
    if not transport.wire:
        return [devices[d].owned_index() for d in range(transport.size)]
    return while_alive(owner, ("ranges", transport.size), lambda: _ranges(owner, transport.size))


def _ranges(owner, parts: int) -> list[slice] | None:
    """The id range each of ``parts`` devices owns, where ``owner`` gives every device one
    (ascending); else None."""
    owner = to_host(owner)
    if owner.size and (np.diff(owner) < 0).any():
        return None
    ends = np.searchsorted(owner, np.arange(parts), side="right").tolist()
    return [slice(start, end) for start, end in zip([0, *ends[:-1]], ends)]


def _next_frontier(
    primitive,
    contract: Contract,
    blocks,
    stamp: int,
    graph,
    state,
    bases,
    keyed,
    output: Frontier,
    inbox: list,
    reads: dict | None = None,
) -> Frontier:
    """Combine each Update of ``inbox`` (each with distinct ids, as communicators deliver)
    into ``state`` in turn; the next frontier (the contract's rule 3): the returned vertices
    this device owns (all of them when ``needs_all``) and the vertices whose communicated
    state changed here. A fresh Frontier: what the step's producer knew (``passed``,
    ``pulled_from``) described one device's view, not this union (the superstep's tally may
    set ``out_edges`` and ``pulled_from`` again, for every device alike). A keyed contract
    with its backend's kernels (``keyed``, :func:`_keyed`) combines and lists a few arrived
    vertices in one kernel a piece, ``stamp`` (this superstep's number) marking each once."""
    if primitive.every_vertex:  # its step reads no frontier: combine, mark nothing
        _applied(contract, blocks, graph, state, bases, keyed, _sized(inbox), reads=reads)
        return Frontier.all(graph)
    if not inbox and output.size_known and not len(output):  # an empty superstep: no kernel
        return Frontier.from_ids(graph, output.ids)
    if any(isinstance(message, Slab | Bits) for message in inbox):
        return _next_frontier_dense(
            primitive, contract, blocks, graph, state, bases, keyed, output, _sized(inbox), reads
        )
    if (
        keyed is not None
        and not output.is_dense
        and (_at_most(output) + sum(_at_most(message) for message in inbox)) * KEYED_SHARE
        < graph.num_vertices
    ):
        keep = None if primitive.needs_all else graph.context.owned  # few: listed by a kernel
        returned = output.listing or (graph.backend.index(output.ids) if len(output) else None)
        updates = [m if isinstance(m, Piece) else m.map(graph.backend.asarray) for m in inbox]
        return keyed.list(returned, keep, updates, stamp)
    inbox = _sized(inbox)
    if graph.backend.capabilities.costly_supersteps:  # marks in a mask: no compaction, one count
        return _next_frontier_marked(primitive, contract, graph, state, bases, keyed, output, inbox)
    mine = output if primitive.needs_all or not len(output) else owned_part(graph, output)
    arrived, touched = [], [output.ids] if len(output) else []
    for update in inbox:
        update = update.map(graph.backend.asarray)
        ids = graph.backend.index(update.ids)
        improved = _combine(contract, state, ids, update.values, graph.xp)
        touched.append(ids)
        if len(mine) < graph.num_vertices:  # else every vertex is in the frontier already
            arrived.append(Frontier.from_ids(graph, update.ids[improved]))
    _rebase(state, bases, touched)
    union = Frontier.union(graph, mine, *arrived)
    if union.is_dense:
        return Frontier.from_mask(graph, union.mask, size=len(union), out_edges=union.out_edges)
    return Frontier.from_ids(graph, union.ids, out_edges=union.out_edges)


def _crossed(message) -> bool:
    """Whether ``message`` is a Piece that crossed a link: a copy of its package, its counts
    unread."""
    return isinstance(message, Piece) and message.crossed


def _at_most(message) -> int:
    """The most vertices a frontier or a message holds: its size, or where that is still
    counted on the device, its bound (``Frontier.at_most``, a Piece's sender's) or its list's
    buffer."""
    if isinstance(message, Piece):
        return message.at_most
    if not isinstance(message, Frontier) or message.size_known:
        return len(message)
    listing = message.listing
    bounds = [b for b in (message.at_most, listing and int(listing[0].shape[0])) if b is not None]
    return min(bounds) if bounds else len(message)


def _learned(packages: list) -> None:
    """Read the counts of ``packages`` (Packed) still on the device, one read a device."""
    pending = list({id(p): p for p in packages if not p.known}.values())
    counts = read_together([(backend_of(p.counts), p.counts) for p in pending])
    for package, values in zip(pending, counts, strict=True):
        package.learn(values)


def _sized(inbox: list) -> list:
    """``inbox`` with each Piece an Update (the packages' counts read where not yet, together:
    one host read), for the paths that size what arrived on the host."""
    _learned([m.packed for m in inbox if isinstance(m, Piece)])
    return [message.update() if isinstance(message, Piece) else message for message in inbox]


def _keyed(contract: Contract, graph, state):
    """The backend's kernels for a keyed contract (``keyed``: packing by owner, combining
    and listing, applying Slabs) on this device's state; None where it has none, where the
    contract is not one (:func:`keyed_columns`), or where a superstep's small operations
    cost less than its passes (NumPy's virtual devices: only a backend that stands in for a
    GPU, ``costly_supersteps``, takes NumPy's)."""
    kernels = fused.lookup("keyed", graph.backend, "step")
    if not graph.backend.capabilities.costly_supersteps:
        kernels = None
    columns = None if kernels is None else keyed_columns(contract, state)
    if columns is None:
        return None
    key, follower = columns
    adds = follower is not None and contract.combiners[follower].ships_change
    return kernels(graph, state, columns, MODES[contract.combiners[key].name], adds)


def _packer(primitive, contract: Contract, pattern, parts: int, unread: bool, graph, keyed, owner):
    """The package of a keyed contract, where the communicator sends by owner: grouped by
    ``owner`` where every returned vertex goes to its owner only; where every device needs
    every update and packages go ``unread`` to their receivers (handed over in one memory,
    or across a link that carries counts), the values of a kernel's list gathered beside it
    (one group; a list whose size is known takes the general path); None elsewhere. (Over
    another link the size is read to send the package: there the general path gathers it
    after that read.)"""
    if keyed is None or contract.owner_only or not pattern.sends_by_owner or parts > PACK_PARTS:
        return None
    if primitive.needs_all:
        if not unread:
            return None
        return lambda ids, count=None: None if count is None else keyed.gather(ids, count)
    return functools.partial(keyed.pack, owner, parts, graph.context.device)


def _next_frontier_marked(
    primitive, contract: Contract, graph, state, bases, keyed, output: Frontier, inbox: list
) -> Frontier:
    """:func:`_next_frontier` where a compaction costs a host read (a GPU): the returned
    vertices (owned ones, unless ``needs_all``) and the improved ones of each Update are
    marked in one mask of every vertex, counted on the device (read with every part's
    counts: :func:`_next_frontier_counted`); a keyed contract's Updates combined and marked
    by its kernels, one a piece (``keyed.apply_updates``)."""
    owned = graph.context.owned
    if output.is_dense or output.listing is not None:  # (a list: marked by a kernel, unread)
        mask = (
            graph.backend.copy(output.mask) if primitive.needs_all else _owned_mask(graph, output)
        )
    else:
        mask = graph.xp.zeros(graph.num_vertices, dtype=bool)
        if len(output):
            returned = graph.backend.index(output.ids)
            mask[returned] = True if primitive.needs_all else owned[returned]
    touched = []  # (a mask where the output is one: no compaction, no read)
    if bases and len(output):
        touched.append(output.mask if output.is_dense else graph.backend.index(output.ids))
    inbox = [update.map(graph.backend.asarray) for update in inbox]
    if keyed is not None:  # (their vertices' baselines taken there)
        keyed.apply_updates(inbox, mask)
        inbox = []
    for update in inbox:
        ids = graph.backend.index(update.ids)  # distinct within an Update
        mask[ids] |= _combine(contract, state, ids, update.values, graph.xp)
        touched.append(ids)
    _rebase(state, bases, touched)
    return Frontier.from_mask(graph, mask)


def _stepped(primitive, iteration: int, graph, frontier: Frontier, state) -> Frontier:
    """The primitive's step (on a ``partial`` frontier, this device's share only, unless it
    ``needs_all``: advance will not pull from it); its output's size, where not known,
    counted on the device for :func:`read_counts` to read with every part's."""
    frontier.partial = not primitive.needs_all
    output = primitive.step(graph, frontier, state, iteration)
    output.defer_counts()
    return output


def _next_frontier_counted(
    primitive,
    contract: Contract,
    blocks,
    stamp: int,
    bounded: bool,
    graph,
    state,
    bases,
    keyed,
    output: Frontier,
    inbox: list,
    reads: dict | None,
) -> Frontier:
    """:func:`_next_frontier`, its size counted on the device where not known (with
    ``bounded``, its out-edges too: they bound the next step's output, :func:`_chosen_unread`),
    and (every device needing every update) the out-edges of ``output`` where
    :func:`_union_edges` may take them (an inbox of Updates, or an early-exit pull's output),
    for :func:`read_counts` to read with every part's."""
    frontier = _next_frontier(
        primitive, contract, blocks, stamp, graph, state, bases, keyed, output, inbox, reads
    )
    frontier.defer_counts(graph.cost_degrees()[0] if bounded else None)
    if primitive.needs_all and (
        output.pulled_from is not None or all(isinstance(m, Update | Piece) for m in inbox)
    ):
        output.defer_counts(graph.cost_degrees()[0])
    return frontier


def _few_as_ids(graph, frontier: Frontier) -> Frontier:
    """A mask ``frontier`` of fewer than V / SPARSE_SHARE vertices as ids (its size known: no
    read), so that the next step makes no pass over every vertex; else ``frontier``."""
    if frontier.is_dense and len(frontier) * SPARSE_SHARE < graph.num_vertices:
        return Frontier.from_ids(graph, frontier.ids, out_edges=frontier.out_edges)
    return frontier


def _rebase(state, bases: dict, touched: list) -> None:
    """The changes sent and received are now the baseline: ``bases`` take the state's values
    at every id of ``touched`` (arrays of ids, or bool masks of every vertex)."""
    for name, base in bases.items():
        array = getattr(state, name)
        for ids in touched:
            if ids.dtype == bool:
                backend_of(base).xp.copyto(base, array, where=ids)
            else:
                base[ids] = array[ids]


def _union_edges(graph, frontier: Frontier, output: Frontier, inbox: list) -> int | None:
    """The out-edges (``cost_degrees``) of the vertices this device returned, unless (every
    device needing every update) its next ``frontier`` plainly misses a vertex it returned or
    received (fewer than arrived in Updates); else None. After Slabs, whose count is not known
    here, only where the count is free or an early-exit pull made ``output`` (its
    ``pulled_from`` and the count spare the next direction test a pass). When every device's
    is a number and the frontiers hold, on every device, as many vertices as all devices
    returned, the returned sets are disjoint and each frontier is their union (a frontier
    holds only returned vertices), so their sum is the out-edges of every device's frontier:
    what the next step's direction test reads."""
    if all(isinstance(u, Update | Piece) for u in inbox):  # (Pieces: their counts read)
        if len(frontier) != len(output) + sum(len(u) for u in inbox):
            return None
    elif output.out_edges is None and output.pulled_from is None:
        return None
    return count_out_edges(graph, output)


def _many(
    contract: Contract, blocks, share: int, transport, bitwise: bool, graph, state, output: Frontier
) -> bool:
    """Whether so many vertices travel from this device that a Slab may pay (else it sends an
    Update): over a wire, as many bytes as its smallest Slab holds (or, where Bits may
    travel, ``bitwise``, its smallest Bits); in one memory, V / (``share`` P) vertices."""
    if not len(output):  # (a Slab of nothing never pays)
        return False
    if transport.wire:
        ident, value, own = _entry_bytes(contract, blocks, graph, state)
        return len(output) * (ident + value) >= own * (1 / 8 if bitwise else value)
    return len(output) * share * transport.size >= graph.num_vertices


def _bitwise(contract: Contract, state) -> bool:
    """Whether the contract's state may travel as Bits: every communicated column holds one
    value a vertex (no lanes) and its combiner has a value that stands for "nothing sent"."""
    columns = [(c, getattr(state, name)) for name, c in contract.combiners.items()]
    return all(
        array is None or array.ndim == 1 and c.absent(array.dtype) is not None
        for c, array in columns
    )


def _level(contract: Contract, graph, state, bases, output: Frontier):
    """How many of the ``output`` vertices this device owns and whether each holds the same
    value in every communicated column (its change, for ``add``), as an int64 pair on the
    device (the count, then 1 or 0), and those values (one-element arrays): what Bits carry
    (:func:`~bspgraph.backend.ops.one_value`, a pass a column). Reads nothing."""
    xp = graph.xp
    owned = slice(*graph.owned_index().indices(graph.num_vertices)[:2])  # (over a wire: a range)
    index = {"mask": output.mask} if _marked(output) else {"ids": graph.backend.index(output.ids)}
    pairs, values = [], {}
    for name in contract.combiners:
        array = getattr(state, name)
        if array is not None:
            since = bases.get(name)  # (an added column's changes, at the output's entries)
            pair, values[name] = ops.one_value(
                graph.backend, array, kept=owned, since=since, **index
            )
            pairs.append(pair)
    if not pairs:  # a vertex set alone
        count = xp.asarray(_owned_count(graph, output), dtype=np.int64)
        return xp.stack([count, xp.ones((), dtype=np.int64)]), values
    if len(pairs) > 1:
        same = xp.stack([pair[1] for pair in pairs]).min()
        pairs[0] = xp.stack([pairs[0][0], same])
    return pairs[0], values


def _common(name: str, graph, state, output: Frontier):
    """How many of the ``output`` vertices hold another value than the commonest of them in
    the communicated column ``name`` (a 0-d count on the device), and that value by name (a
    one-element array): what Bits beside the others' ids carry (:class:`Mostly`,
    :func:`~bspgraph.backend.ops.common_value`). Reads nothing."""
    count, value = ops.common_value(graph.backend, getattr(state, name), output.mask)
    return count, {name: value}


def _excepted(contract: Contract, state) -> str | None:
    """The name of the contract's one communicated column of this run where it is not
    added: what Bits and the others' ids (:class:`Mostly`) carry; else None."""
    columns = [name for name in contract.combiners if getattr(state, name) is not None]
    if len(columns) != 1 or contract.combiners[columns[0]].ships_change:
        return None
    return columns[0]


def _foretold(
    primitive, contract: Contract, blocks, share: int, parts: int, graph, state, output: Frontier
) -> bool | None:
    """Whether this device's message is Bits chosen unread from its step's frontier's
    out-edges (``output.at_most``, :func:`_bounded`), and whether they cover every vertex;
    None: not foretold. Where the bound holds V / (``share`` P) vertices or more (a heavy
    level), the choice :func:`_dense_choice` would make of Bits for that many returned
    vertices, a share 1 / P of them owned here (all of them for a part's pull, which sends
    its owners nothing): a level that returns fewer costs Bits' few bytes and a pass over
    the receivers' blocks, and the host queues the exchange behind the step's kernels
    instead of waiting for them to read its size."""
    bound = None if output.size_known else output.at_most
    if bound is None or not _marked(output) or output.owned_only and not primitive.needs_all:
        return None
    if bound * share * parts < graph.num_vertices:
        return None
    kept = bound if output.owned_only else bound // parts
    wire = _entry_bytes(contract, blocks, graph, state)
    return _dense_choice(
        primitive, contract, share, parts, graph, bound, kept, wire=wire, level=True
    )


def _guarded(contract: Contract, graph, state, bases, output: Frontier):
    """:func:`_level`'s test and values, each value the combiner's absent one (which changes
    nothing where it arrives) where the test fails: foretold Bits, sent before the test is
    read, are applied harmlessly, and the tally has their Slab sent again."""
    test, values = _level(contract, graph, state, bases, output)
    xp = graph.xp
    held = test[1] == 1
    for name, value in values.items():
        absent = contract.combiners[name].absent(value.dtype)
        values[name] = xp.where(held, value, value.dtype.type(absent))
    return test, values


def _resent(contract: Contract, blocks, misfired: set, covers: dict, graph, state, bases, output):
    """This device's message in the round after foretold Bits misfired: its Slab where its
    Bits were among them, else nothing (an empty Update)."""
    device = graph.context.device
    if device in misfired:
        return _slab(contract, blocks, covers[device], graph, state, bases, output)
    return _package(contract, graph, state, bases, None, Frontier.empty(graph))


def _kind(primitive) -> tuple:
    """A primitive's class and options: what a cut remembers of values that varied (BFS with
    parents varies, BFS without them does not)."""
    return type(primitive), _describe(getattr(primitive, "options", {}))


def _joined(bounded: bool, graph, frontier: Frontier, changed: Frontier) -> Frontier:
    """The union of a next ``frontier`` and the vertices a resent round ``changed``, counted
    on the device (its out-edges too, with ``bounded``), going on from where it did."""
    joined = Frontier.union(graph, frontier, changed)
    joined.defer_counts(graph.cost_degrees()[0] if bounded else None)
    joined.edges_before = frontier.edges_before
    return joined


def _marked(output: Frontier) -> bool:
    """Whether ``output`` is a mask, or a producer's list still counted on the device (its
    mask made by a kernel that reads the count): what :func:`_level` passes over unread, and
    what Bits are made of."""
    return output.is_dense or output.listing is not None


def _unfolded(contract: Contract, graph, state, bits: Bits) -> Slab:
    """``bits`` as a Slab: its value where its bit is set, the combiner's absent value
    elsewhere."""
    absent = {
        name: c.absent(getattr(state, name).dtype)
        for name, c in contract.combiners.items()
        if getattr(state, name) is not None
    }
    return bits.map(graph.backend.asarray).slab(absent)


def _owned_count(graph, output: Frontier):
    """How many of the ``output`` vertices this device owns: a count queued on the device (the
    size of ``Frontier.all``, which holds only owned ones)."""
    owned = graph.context.owned
    if output.owned_only or output.is_dense and output.mask is owned:  # (or Frontier.all)
        return len(output)
    mine = graph.owned_index()
    if output.is_dense and isinstance(mine, slice):  # a count over the part's range only
        return graph.backend.count(output.mask[mine])
    return graph.backend.count(output.mask & owned if output.is_dense else owned[output.ids])


def _entry_bytes(contract: Contract, blocks, graph, state) -> tuple[int, int, int]:
    """The bytes of a vertex's id and of its communicated values, and how many vertices this
    device's block holds."""
    value = sum(
        array.dtype.itemsize * math.prod(array.shape[1:])
        for name in contract.combiners
        if (array := getattr(state, name)) is not None
    )
    block = blocks[graph.context.device]
    own = block.stop - block.start if isinstance(block, slice) else int(block.shape[0])
    return graph.indices.dtype.itemsize, value, own


def _bounded(graph, frontier: Frontier, output: Frontier) -> Frontier:
    """``output``, its ``at_most`` set where its size is still counted on the device and the
    out-edges of the ``frontier`` that the step made it from are known: each vertex a level
    returns has an edge from the frontier (pushed or pulled), so at most those (and V). A
    step whose levels ran ahead (SSSP on a region) returns more: the bound chooses messages
    and paths, and sizes no buffer."""
    if not output.size_known and frontier.out_edges is not None:
        output.at_most = min(frontier.out_edges, graph.num_vertices)
    return output


def _chosen_unread(
    primitive,
    contract: Contract,
    blocks,
    share: int,
    transport,
    slabs: bool,
    graph,
    state,
    output: Frontier,
) -> tuple[bool, bool | None]:
    """Whether this device's message is chosen without reading its output's size, and which
    (as :func:`_dense_choice`: None, an Update). The step's frontier's out-edges bound the
    size (``output.at_most``, :func:`_bounded`). An Update is certain where no Slab may travel
    (``blocks`` None) or where not even that many returned vertices would make one pay,
    whether none or all of them are owned here (the choice grows with the returned
    vertices). It weighs a Slab's values, not Bits: a dense message costs the receiver
    passes over its block that the bytes saved on a fast link do not repay at a level the
    bound holds this low (push BFS's first level on rmat24, parts of one H200 over a
    simulated link: 0.7 ms as ids, 1.6 ms as Bits). With ``slabs`` the Slab the bound
    foretells is chosen too, a share 1 / P of it taken as owned (all of it for a part's
    pull, ``owned_only``): a wrong guess costs a pass over a block in one memory (a Slab is a
    view), and bytes over a link, where not waiting for the step repays them (two H200,
    rmat25, same-call A/B: SSSP 20.97 -> 18.81 ms, CC 5.73 -> 5.40, BC unchanged)."""
    bound = None if output.size_known else output.at_most
    if bound is None:
        return False, None
    if blocks is None:
        return True, None
    wire = _entry_bytes(contract, blocks, graph, state) if transport.wire else None
    choice = functools.partial(
        _dense_choice,
        primitive,
        contract,
        share,
        transport.size,
        graph,
        bound,
        wire=wire,
    )
    if choice(0) is None and choice(bound) is None:
        return True, None
    if slabs:  # every one owned here (a part's pull), or a share 1 / P of them
        return True, choice(bound if output.owned_only else bound // transport.size)
    return False, None


def _dense_choice(
    primitive,
    contract: Contract,
    share: int,
    parts: int,
    graph,
    returned: int,
    kept: int,
    wire=None,
    level: bool = False,
) -> bool | None:
    """Whether this device, which returned many (``returned``) vertices (:func:`_many`),
    ``kept`` of them its own, sends a Slab this superstep, and if so whether it covers every
    vertex (True) or only the device's own block (False); None: an Update. It covers every
    vertex unless no other device's vertex can have changed here (:func:`_covers_all`). Over
    a wire (``wire``: :func:`_entry_bytes`) a Slab goes where it holds fewer bytes than the
    Update; in one memory, where the entries that travel from this device number
    V / (``share`` P) or more (``share``: the backend's ``dense_share``, so that P devices
    alike send V / ``share`` in all), times P - 1 when every device needs every vertex's
    value from every other (each receives P - 1 whole columns). With ``level`` (every
    returned vertex took one value a column), the dense message is Bits, a bit a vertex."""
    size = graph.num_vertices
    spread = returned - kept  # returned vertices that other devices own
    whole = _covers_all(primitive, contract, returned, kept)
    if wire is not None:  # to owners: the others' blocks; to all: a block or every vertex
        _, value, own = wire
        slab = _dense_size(primitive, graph, whole, own)
        update = _update_bytes(primitive, wire, returned, kept)
        return whole if slab * (1 / 8 if level else value) <= update else None
    if not primitive.needs_all:
        travelling, span = spread, size
    else:
        travelling, span = returned, size * (parts - 1 if whole else 1)
    return whole if travelling * share * parts >= span else None


def _mostly_choice(
    primitive, contract: Contract, graph, wire, returned: int, kept: int, choice, others: int
) -> bool | None:
    """Where Bits and the ids of the ``others`` returned vertices that took another value
    (:class:`Mostly`) hold fewer bytes over a wire (``wire``: :func:`_entry_bytes`) than
    what :func:`_dense_choice` chose (``choice``), whether they cover every vertex; else
    None."""
    ident, value, own = wire
    whole = _covers_all(primitive, contract, returned, kept) if choice is None else choice
    dense = _dense_size(primitive, graph, whole, own)
    chosen = _update_bytes(primitive, wire, returned, kept) if choice is None else dense * value
    return whole if dense / 8 + others * (ident + value) < chosen else None


def _update_bytes(primitive, wire, returned: int, kept: int) -> int:
    """The bytes of this device's Update over a wire: every returned vertex's entry where the
    primitive ``needs_all``, else those other devices own."""
    ident, value, _ = wire
    return (returned if primitive.needs_all else returned - kept) * (ident + value)


def _covers_all(primitive, contract: Contract, returned: int, kept: int) -> bool:
    """Whether a dense message of this device covers every vertex, not its own block only:
    unless no other device's vertex can have changed here (replace, or every returned vertex
    is owned)."""
    return not primitive.needs_all or (not contract.owner_only and returned > kept)


def _dense_size(primitive, graph, whole: bool, own: int) -> int:
    """The vertices a dense message covers over a wire: to all, every vertex or a block of
    ``own``; to owners, the others' blocks."""
    size = graph.num_vertices
    return (size if whole else own) if primitive.needs_all else size - own


def _read_each(backends: dict, values: dict) -> dict:
    """``values`` (per device: None, an int, or counts on the device) on the host: a 0-d
    count as an int, an array as a list; every count of a GPU read in one copy
    (:func:`~bspgraph.backend.read_together`)."""
    waiting = [d for d, value in values.items() if value is not None and not isinstance(value, int)]
    read = dict(values)
    for d, numbers in zip(waiting, read_together([(backends[d], values[d]) for d in waiting])):
        read[d] = numbers[0] if values[d].ndim == 0 else numbers
    return read


def _unpacked(backends: dict, messages: dict, outputs: dict, lent: bool = False) -> dict:
    """``messages`` with each Packed one an Update, every part's counts by owner read at once
    with the sizes of those parts' ``outputs`` still counted on the device (one host read a
    GPU; none without a Packed message). With ``lent`` (a link that carries counts) a package
    of at most LENT_BYTES stays Packed: it crosses unread, its counts read with the next
    frontiers'."""
    packed = {
        d: m
        for d, m in messages.items()
        if isinstance(m, Packed) and not (lent and wire_bytes(m.piece(0)) <= LENT_BYTES)
    }
    counts = read_counts(
        [outputs[d] for d in packed], [(backends[d], m.counts) for d, m in packed.items()]
    )
    counts = dict(zip(packed, counts, strict=True))
    return {d: m.update(counts[d]) if d in counts else m for d, m in messages.items()}


def _message(
    contract: Contract,
    blocks,
    graph,
    state,
    bases,
    packer,
    output: Frontier,
    whole: bool | None,
    levels: dict,
    mostly: dict,
) -> Update | Packed | Slab | Bits | Mostly:
    """This device's message: its package (:func:`_package`) where ``whole`` is None, else
    its Bits where ``levels`` holds its one value a column (:func:`_level`), else Bits and
    the others' ids where ``mostly`` holds its commonest value (:func:`_common`), else its
    Slab (:func:`_slab`)."""
    if whole is None:
        return _package(contract, graph, state, bases, packer, output)
    device = graph.context.device
    block = None if whole else device
    region = slice(None) if block is None else blocks[block]
    level = levels.get(device)
    if level is not None:
        return Bits.of(block, output.mask[region], level)
    if device in mostly:
        return _mostly(graph, state, block, region, output, mostly[device])
    return _slab(contract, blocks, whole, graph, state, bases, output)


def _mostly(graph, state, block: int | None, region: slice, output: Frontier, common: tuple):
    """Bits of the returned vertices of ``region`` (every vertex, or ``block``'s) that hold
    the value ``common`` names for the one communicated column, and an Update of the others
    (``common``: that value by name and how many others there are, read)."""
    ((name, value),), count = common[0].items(), common[1]
    column, returned = getattr(state, name)[region], output.mask[region]
    apart = returned & (column != value)
    same = returned ^ apart
    apart = graph.backend.nonzero(apart, graph.indices.dtype, count)  # (no host read)
    ids = apart + graph.indices.dtype.type(region.start or 0)
    return Mostly(Bits.of(block, same, common[0]), Update(ids, {name: column[apart]}))


def _slab(contract: Contract, blocks, whole: bool, graph, state, bases, output: Frontier) -> Slab:
    """This device's dense message: every communicated column (the change since the last
    superstep, for ``add``), neutral where the step returned nothing, over every vertex, or
    over the device's own block when no other device's vertex can have changed (``whole``
    False: replace, or every returned vertex is owned)."""
    block = None if whole else graph.context.device
    region = slice(None) if block is None else blocks[block]
    reads = any(combiner.reads_returned for combiner in contract.combiners.values())
    returned = output.mask[region] if reads else None
    values = {}
    for name, combiner in contract.combiners.items():
        array = getattr(state, name)
        if array is not None:
            column = array[region] - bases[name][region] if name in bases else array[region]
            values[name] = combiner.neutral(graph.xp, column, returned)
    return Slab(block, values)


def _next_frontier_dense(
    primitive,
    contract: Contract,
    blocks,
    graph,
    state,
    bases,
    keyed,
    output: Frontier,
    inbox: list,
    reads: dict | None = None,
) -> Frontier:
    """:func:`_next_frontier` for an inbox with Slabs: each applied to its block in turn (an
    Update beside them, from a process that sent few vertices, at its ids), the changed
    vertices marked in a mask that starts from the returned ones (those owned, unless
    ``needs_all``). With the keyed kernels, the frontier's size (and out-edges, when the
    returned ones' are known) come from their count of the vertices they marked, read from
    the device when first asked for (after every device has queued its kernels)."""
    if primitive.needs_all:  # (a size still counted on the device: counted with the mask)
        known = output.size_known
        mask = graph.backend.copy(output.mask)
        size, edges = (len(output), output.out_edges) if known else (None, None)
    else:
        mask, size, edges = _owned_mask(graph, output), None, None
    tally = _applied(
        contract, blocks, graph, state, bases, keyed, inbox, mask, edges is not None, reads
    )
    if size is not None and tally is not None:  # the vertices marked and their edges, read
        return Frontier.from_mask(graph, mask, counted=(tally, size, edges))  # when asked
    return Frontier.from_mask(graph, mask)


def _applied(
    contract: Contract,
    blocks,
    graph,
    state,
    bases,
    keyed,
    inbox: list,
    mask=None,
    edges: bool = False,
    reads: dict | None = None,
):
    """Combine every message of ``inbox`` into ``state`` in turn: an Update at its ids (beside
    Slabs, from a process that sent few vertices), a Gathered Slab at the vertices of its
    block this device's lists name (``reads``), a Slab or Bits over its block (in one fused
    pass with the keyed kernels; else Bits unfolded into a Slab), marking in ``mask`` (unless
    None) the vertices it changed; the changes are the new baseline (``bases``: every change
    is shipped and applied). Returns the keyed kernels' tally of the vertices they marked
    (and with ``edges``, their out-edges), or None where a message was applied without them
    or nothing was marked."""
    tally, counted = None, mask is not None
    for message in inbox:
        if isinstance(message, Update):
            update = message.map(graph.backend.asarray)
            region, values = graph.backend.index(update.ids), update.values
        else:
            if isinstance(message, Gathered):
                region = reads[message.block]
            else:
                region = slice(None) if message.block is None else blocks[message.block]
            if keyed is not None and isinstance(region, slice):  # one fused pass over it
                tally = keyed.apply_block(region, message, mask, tally, edges)
                continue
            if isinstance(message, Bits):
                message = _unfolded(contract, graph, state, message)
            values = message.values
        changed = _combine(contract, state, region, values, graph.xp, changes=mask is not None)
        if mask is not None:
            mask[region] |= changed
        counted = False
    for name, base in bases.items():
        base[...] = getattr(state, name)
    return tally if counted else None


def _combine(contract: Contract, state, ids, values: dict, xp, *, changes: bool = True):
    """Apply ``values`` at ``ids`` (distinct ids, or a slice) to ``state`` with the contract's
    combiners; return a bool per id, True where the vertex's state changed (None without
    ``changes``: then a column whose combiner keeps what arrives is written without reading
    what it held). Each ``follows`` state sees whether its key's incoming value won or tied
    against the value held before. Every column is written whole at ``ids``: no compaction,
    no host synchronisation."""
    columns = [
        (name, combiner, getattr(state, name)) for name, combiner in contract.combiners.items()
    ]
    columns = [(name, combiner, array) for name, combiner, array in columns if array is not None]
    key, applied = contract.key, {}
    won = tied = None
    if any(combiner.follows for _, combiner, _ in columns):  # the key's outcome, before any
        current, incoming = _at(getattr(state, key), ids), values[key]  # column changes
        applied[key] = contract.combiners[key].apply(xp, current, incoming)
        won, tied = applied[key][1], incoming == current
    improved = None
    for name, combiner, array in columns:
        if not changes and combiner.keeps_incoming:  # (no follower keeps what arrives)
            array[ids] = values[name]
            continue
        outcome = (won, tied) if combiner.follows else (None, None)
        combined, changed = applied.get(name) or combiner.apply(
            xp, _at(array, ids), values[name], *outcome
        )
        array[ids] = combined
        if changes:
            improved = changed if improved is None else improved | changed
    if not changes:
        return None
    if improved is None:  # no communicated state exists in this run
        return xp.zeros(len(next(iter(values.values()))), dtype=bool)
    return improved


def _share_owned(
    primitive, devices, states, transport, *, alone: bool = False, to: int | None = None
) -> None:
    """Give every process's device (device ``to`` only, where given) the output state of
    every vertex from its owner: one exchange round over the transport (device to device on
    NCCL), each owner to all peers; with ``alone`` (a run that ended on the first device
    alone: rule 6), the first device's state of every vertex, as a Slab from it."""
    (d,) = transport.local
    graph, state = devices[d], states[d]
    peers = [p for p in (range(transport.size) if to is None else [to]) if p != d]
    names = [
        spec.name
        for spec in primitive.state
        if spec.output and getattr(state, spec.name) is not None
    ]
    if not peers:  # (the one that every other sends to, where ``to`` is given)
        mine = None
    elif not alone:
        ids = graph.owned_ids()
        mine = Update(ids, {name: getattr(state, name)[ids] for name in names})
    else:
        mine = Slab(None, {name: getattr(state, name) for name in names}) if d == LEADER else None
    sends = [(d, peer, mine) for peer in peers if mine is not None]
    inbox, _ = transport.exchange_round(sends, num_vertices=graph.num_vertices)
    for message in inbox[d]:
        at = slice(None) if isinstance(message, Slab) else message.ids
        for name in names:
            getattr(state, name)[at] = message.values[name]


def _gather(primitive, devices, states, *, host: bool) -> dict:
    """Each vertex's output values from its owner's device, all devices in this process: the
    other devices' owned values written into the first device's arrays (copied GPU to GPU
    where the devices are GPUs that do not share memory), the sentinels replaced there once;
    host arrays, or arrays on the first device with ``host=False``."""
    first, *others = states
    whole = SimpleNamespace(**vars(states[first]))  # scalars agree on every device
    target = devices[first].backend
    for spec in primitive.state:
        array = getattr(whole, spec.name)
        if not spec.output or array is None:
            continue
        for d in others:
            with devices[d].backend.activate():  # read on d's own GPU (a view for a range)
                index = devices[d].owned_index()
                values = getattr(states[d], spec.name)[index]
            with target.activate():  # (the same arrays where the devices share memory)
                index = index if isinstance(index, slice) else target.asarray(index)
                array[index] = target.asarray(values)
        setattr(whole, spec.name, array)
    with target.activate():
        return gather(primitive, whole, host=host)

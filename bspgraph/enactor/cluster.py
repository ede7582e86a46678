"""Every device from one Python call: worker processes, a device each, started once and kept.

``bg.cluster(P)`` starts an MPI job of P ranks with ``mpiexec``, each rank a worker of a Dask
scheduler in this process, or of one already running given by its address
(:mod:`distributed`, as cuGraph's multi-GPU path drives its workers through Dask), that holds
one of Dask's actors: a call goes to them straight, not through the
scheduler's tasks (its round trip on two NumPy workers: 2 ms against 11) nor its proxy (on two
H200 workers a call reached rank 0 in 1.6-1.9 ms, against 2.1-3.0 through it). A run on the
cluster is the run ``mpiexec -n P`` makes: every worker calls
:func:`~bspgraph.enactor.enact` with the transport of its rank (NCCL on GPUs, one per rank;
MPI on NumPy), and rank 0's whole result comes back here: its large arrays, on GPUs, lent
from rank 0's GPU memory through CUDA IPC and copied here straight from it, as a run under
``mpiexec`` copies its result to the host (268 MB in 5 ms on an H200 from a free page-locked
block, where writing them to shared memory took 0.28 s); on NumPy workers through shared
memory (a file of /dev/shm that this process maps, where Dask would pickle them through a
socket; 268 MB in 0.23 s against 0.33 on a 2-core machine). A graph is cut here, once for
each cut a run asks for (partitioner, seed, and whether the primitive needs the whole graph
or run ids), as :func:`~bspgraph.enactor.layout.distribute` cuts it, and each worker is sent
its own part only; a worker keeps its parts (by a token this process gives the cut), so that
a second call on the same graph sends nothing and sets nothing up (``stats.setup_seconds``
0).

Faults end the call on every worker with one :class:`~bspgraph.exceptions.WorkerError` and
never hang: a worker that raises ends its MPI job (the transport aborts every rank), a worker
that dies ends it too (``mpiexec`` stops the others); this process sees the job end or the
error arrive, stops what is left, and names the rank, its device and the cause. The next call
starts new workers.

Use it as a context, in which every run goes to it::

    with bg.cluster(2, backend="numpy") as workers:
        depth = bg.bfs(G, 0).depth

or pass it to a run (``bg.bfs(G, 0, cluster=workers)``) and close it when done. It needs the
``engine`` extra (:mod:`distributed`) and the ``mpi`` one (mpi4py and MPICH's ``mpiexec``;
Open MPI's serves too).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import glob
import inspect
import itertools
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import numpy as np

from ..backend import to_host
from ..comm.engine import AbortedError
from ..exceptions import DeviceError, WorkerError
from .contract import Primitive
from .layout import cut, partitioner_of
from .loop import enact, enact_chain
from .running import GPU_WORKERS, RUNNER
from .running import mpiexec as find_mpiexec
from .solo import takes_part, under_floor

START_TIMEOUT = 120.0  # seconds for P workers to join the scheduler
CONNECT_TIMEOUT = 10.0  # seconds for a scheduler given by address to answer
JOB_POLL_SECONDS = 0.05  # how often a run looks at its workers' job (results wake it at once)
JOB_GRACE_SECONDS = 2.0  # how long a lost worker's job may take to end and say why
KEPT_GRAPHS = 4  # graphs a worker keeps (the least recently sent one goes first)
SHARED = "/dev/shm"  # where a large result comes back: Linux's shared memory, as files
HANDED_BYTES = 1 << 20  # the smallest result array handed over there
# glibc's malloc thresholds in a worker (where the caller sets none): in a Dask worker its
# large temporaries were mapped afresh at every allocation (rmat16, a BFS: 1,924 page faults
# and 1.8 ms of system time a run, 9.1 ms against 6.5 in a plain process); fixed at the most
# that glibc's own moving thresholds reach (32 MiB, and twice that before the heap is trimmed)
# they stay in the heap, as in a plain process (6.5 ms, no fault)
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}
# Dask's periodic work in a worker, which takes the interpreter's lock from the thread that
# runs the actor: its statistical profiler samples that thread's stack every 10 ms, its
# system and memory monitors and its event loop's health check run every 0.5, 0.1 and 0.02 s.
# A worker here holds no Dask data and runs one call at a time: off, or once an hour (two
# H200, rmat25, one call: BFS auto bsp 7.3 -> 6.0 ms, 1.11x -> 0.91x of mpiexec ranks' time)
WORKER_DASK = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "1h",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1h",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1h",
}


def cluster(
    workers: int | None = None,
    *,
    backend: str | None = None,
    hosts: list[str] | None = None,
    scheduler: str | None = None,
    client=None,
) -> Cluster:
    """Start ``workers`` worker processes, one a device (GPUs ``0 .. workers - 1`` of this
    machine on CuPy, CPU processes on NumPy; or spread over ``hosts``), for runs from this
    process, on a Dask scheduler of this process or the one at ``scheduler``; see
    :class:`Cluster`. With ``client`` (a ``distributed.Client``), run on that deployment's
    own workers instead (the first ``workers`` of them, default all): :class:`Deployment`."""
    if client is not None:
        if hosts is not None or scheduler is not None:
            raise ValueError("cluster(client=...): its workers run already; no hosts or scheduler")
        return Deployment(client, workers, backend=backend)
    if workers is None:
        raise ValueError("cluster(): expected a count of workers, or a client's deployment")
    return Cluster(workers, backend=backend, hosts=hosts, scheduler=scheduler)


class Cluster:
    """``size`` workers, one MPI rank and one device each, driven from this process.

    Parameters
    ----------
    workers : int
        The number of devices (ranks).
    backend : str, optional
        "numpy" or "cupy" (default: CuPy where a GPU is usable). On CuPy, rank r drives
        GPU r of its node and the ranks meet over NCCL when each has its own GPU, else over
        MPI.
    hosts : list of str, optional
        The machines the workers run on, as ``mpiexec`` takes them (``"node1"``, or
        ``"node1:4"`` for four ranks there: MPICH's ``-hosts``, Open MPI's ``--host``);
        default this machine only. The scheduler then listens on every interface of this
        machine, and the hosts reach it by its name.
    scheduler : str, optional
        The address of a Dask scheduler already running (``"tcp://head:8786"``, as
        ``dask scheduler`` prints it) that the workers join and this process calls them
        through, where it would start one of its own; its other workers get no run, and
        :meth:`close` stops only these. A run holds its worker's event loop, so the
        scheduler must not time out silent workers (``distributed.scheduler.worker-ttl``:
        None, as the one started here is told).

    Raises
    ------
    DeviceError
        ``mpiexec`` or the ``distributed`` package is missing, or the workers did not start.
    """

    AFTER_A_FAULT = "every worker was stopped (the next run starts new ones)"

    def __init__(
        self,
        workers: int,
        *,
        backend: str | None = None,
        hosts: list[str] | None = None,
        scheduler: str | None = None,
    ):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"cluster(workers={workers!r}): expected a count >= 1")
        if hosts is not None and (isinstance(hosts, str) or not all(hosts)):
            raise ValueError(f"cluster(hosts={hosts!r}): expected a list of host names")
        if scheduler is not None and (not isinstance(scheduler, str) or "://" not in scheduler):
            raise ValueError(
                f"cluster(scheduler={scheduler!r}): expected a Dask scheduler's address, "
                "such as 'tcp://head:8786'"
            )
        self.size, self.backend, self.hosts, self.scheduler = workers, backend, hosts, scheduler
        self._client = self._scheduler = self._job = self._log = self._exit = None
        self._finalizer = None
        self._actors: list = []  # each rank's actor (:class:`_Rank`), by rank
        self._pids: dict[int, int] = {}  # each worker's process id: its rank
        self._tokens: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._held: dict[tuple, None] = {}  # the cuts whose parts the workers hold, as sent
        self._opened: dict[bytes, tuple] = {}  # rank 0's lending buffers' handles open here
        self._lending: dict[tuple, tuple] = {}  # this process's, for large GPU params
        self._numbers = itertools.count()
        self._prefix = f"bspgraph-{os.getpid()}-{id(self):x}"  # its files in SHARED
        self._tag = f"{self._prefix}-{time.time_ns():x}"  # its workers' resource on a scheduler
        self._calls = itertools.count()
        self._context: list[contextvars.Token] = []
        self._start()

    def __repr__(self) -> str:
        state = "running" if self._running() else "stopped"
        on = "" if self.scheduler is None else f", scheduler={self.scheduler!r}"
        return f"Cluster(workers={self.size}, backend={self.backend!r}{on}, {state})"

    def __enter__(self) -> Cluster:
        self._context.append(RUNNER.set(self))
        return self

    def __exit__(self, *exc) -> None:
        RUNNER.reset(self._context.pop())
        self.close()

    def enact(self, work, graph, **run) -> tuple[dict, object]:
        """:func:`~bspgraph.enactor.enact` of ``work`` (a primitive, or a
        :class:`~bspgraph.enactor.loop.Chain` of runs, in its primitive's cut) on ``graph`` on
        every worker, its ``run`` options as given (``devices``: None or this cluster's size);
        rank 0's result (host arrays, or on this process's device with ``result_device``) and
        stats (a chain's: a list)."""
        primitive = work if isinstance(work, Primitive) else work.primitive
        devices = run.pop("devices", None)
        if devices not in (None, self.size) and not (
            isinstance(devices, list) and len(devices) == self.size
        ):
            raise DeviceError(
                f"devices={devices!r}: the cluster has {self.size} workers, a device each"
            )
        backend = run.pop("backend", None)
        if backend not in (None, self.backend):
            raise DeviceError(f"backend={backend!r}: the cluster runs on {self.backend!r}")
        if not self._running():  # stopped by a fault, or closed: new workers
            self._start()
        on_device = run.pop("result_device", False)
        how = {  # the cut this run asks for (as layout._parts makes it)
            "partitioner": partitioner_of(run.get("partitioner")),
            "seed": run.get("seed", 0),
            "replicate": primitive.replicate_graph,
            "relabel": primitive.params is not None,
            # rank 0's light supersteps alone (rule 6), or its whole run (a graph under the floor)
            "whole": takes_part(primitive) or under_floor(graph, self._kind()),
        }
        token = (self._token(graph), *{**how, "partitioner": repr(how["partitioner"])}.values())
        sent = [None] * self.size if token in self._held else self._parts(graph, how)
        borrows = self._borrows()
        handed = HandOver(socket.gethostname(), f"{self._prefix}-{next(self._calls)}", borrows)
        if borrows:  # large GPU params lent to the workers, as rank 0 lends its result here
            run = _lent(run, self._lending)
        import cloudpickle  # (Dask's: here with it)

        # what every rank is told, pickled once here (one frame, where Dask frames each
        # argument apart: 0.6 ms a call on two NumPy workers); a part travels as it is
        call = cloudpickle.dumps((token, work, self.backend, run, handed))
        futures = [
            actor.run(call, *([] if part is None else [part]))
            for part, actor in zip(sent, self._actors, strict=True)
        ]
        ((result, stats),) = self._wait(futures, taken=[0])  # (the others return None)
        result = {name: _taken(value, on_device, self._opened) for name, value in result.items()}
        if token not in self._held:  # as the workers keep them: the last KEPT_GRAPHS sent
            self._held[token] = None
            while len(self._held) > KEPT_GRAPHS:
                self._held.pop(next(iter(self._held)))
        if on_device:  # (a borrowed array is on this process's device already)
            from ..backend import get_backend

            target = get_backend(self.backend)
            result = {
                name: target.asarray(value) if getattr(value, "ndim", 0) else value
                for name, value in result.items()
            }
        return result, stats

    def _borrows(self) -> bool:
        """Whether this process takes rank 0's large GPU results through CUDA IPC: its
        workers run on GPUs of this machine, and CuPy sees a GPU here."""
        if self.backend == "numpy" or self.hosts is not None:
            return False
        from ..backend import gpu_count

        return gpu_count() > 0

    def close(self) -> None:
        """Stop the workers and the scheduler started here (a later run starts new ones)."""
        self._stop()
        self._lending.clear()  # (no worker left to read them)
        if self._client is not None:
            self._client.close()
            if self._scheduler is not None:
                self._scheduler.close()
            self._client = self._scheduler = None

    # --- internals ------------------------------------------------------------------------------
    def _running(self) -> bool:
        return self._job is not None

    def _start(self) -> None:
        """The scheduler (once), then the workers' MPI job; each worker's rank."""
        mpiexec = find_mpiexec()
        if mpiexec is None:
            raise DeviceError("bg.cluster needs mpiexec: pip install 'bspgraph[mpi]'")
        if self._client is None:
            self._client = self._connected()
        self._log = tempfile.TemporaryFile()  # the job's output, read when it fails
        env = {**WORKER_MALLOC, **WORKER_DASK, **os.environ, "DASK_LOGGING__DISTRIBUTED": "error"}
        if self.scheduler is not None:
            address = self.scheduler
        else:
            address = self._scheduler.scheduler_address
            if self.hosts is not None:  # (0.0.0.0: reached by this machine's name)
                address = f"tcp://{socket.gethostname()}:{address.rsplit(':', 1)[1]}"
        self._job = subprocess.Popen(
            [mpiexec, *_placement(mpiexec, self.hosts), "-n", str(self.size), sys.executable]
            + ["-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny"]
            + ["--no-dashboard", "--death-timeout", "60"]  # (this process gone: they go)
            + ["--resources", f"{self._tag}=1"],  # (which of the scheduler's are these)
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: stopped as a whole
        )
        self._finalizer = weakref.finalize(self, _ended, self._job.pid, self._prefix)  # (exit too)
        started = time.monotonic()
        self._starting(lambda: len(self._workers()) >= self.size, started)
        made = [  # an actor on each worker: a call goes to it straight, not through tasks
            self._client.submit(_Rank, actor=True, workers=[w], allow_other_workers=False)
            for w in self._workers()
        ]
        self._starting(lambda: all(future.done() for future in made), started)
        actors = [future.result() for future in made]
        ranks = self._wait([actor.rank() for actor in actors])
        self._actors = [actor for _, actor in sorted(zip(ranks, actors), key=lambda p: p[0])]
        self._pids = {pid: rank for rank, pid in ranks}
        self._held.clear()

    def _connected(self):
        """A Dask client of the scheduler given, or of one started here (kept: once)."""
        try:
            from distributed import Client, LocalCluster
        except ImportError as error:
            raise DeviceError(
                "bg.cluster needs Dask's distributed: pip install 'bspgraph[engine]'"
            ) from error
        # (to the workers straight: else an actor's call and its answer each go through the
        # scheduler's proxy, a hop more each way)
        if self.scheduler is not None:
            try:
                return Client(self.scheduler, direct_to_workers=True, timeout=CONNECT_TIMEOUT)
            except OSError as error:
                raise DeviceError(
                    f"bg.cluster: no Dask scheduler answered at {self.scheduler}: {error}"
                ) from error
        import dask

        with dask.config.set({"distributed.scheduler.worker-ttl": None}):
            self._scheduler = LocalCluster(
                n_workers=0,
                processes=False,
                protocol="tcp",
                host="127.0.0.1" if self.hosts is None else "0.0.0.0",
                scheduler_port=0,
                dashboard_address=":0",  # (none asked for: a free port, not 8787)
                silence_logs=logging.ERROR,
            )
        return Client(self._scheduler, direct_to_workers=True)

    def _starting(self, ready, started: float) -> None:
        """Wait until ``ready()``; a DeviceError (the job stopped) where the workers' job ends
        first or START_TIMEOUT seconds pass from ``started``."""
        while not ready():
            if self._job.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                cause = self._cause()
                self._stop()
                raise DeviceError(f"bg.cluster: {self.size} workers did not start: {cause}")
            time.sleep(JOB_POLL_SECONDS)

    def _wait(self, futures, taken: list[int] | None = None) -> list:
        """The results of the actors' futures ``taken`` (default all), once every one is
        done; a WorkerError (every worker stopped) as soon as one fails or the workers' job
        ends. A future that lost its worker's connection waits a moment for the job to end,
        so that the error names the rank, its device and the cause. It waits on an event that
        each future sets when done (watched on the client's event loop), never on a wait that
        raises a TimeoutError a look: its traceback, held in a cycle with Dask's frames, kept
        the callers' frames and so the run's result alive until a collection (on GPUs, a
        page-locked block that CuPy's pool could not give the next call)."""
        done, outcomes = threading.Event(), {}

        def watch() -> None:  # (on the client's event loop, where the futures settle)
            for rank, future in enumerate(futures):
                asyncio.ensure_future(_settled(future, rank, outcomes, done))

        self._client.loop.add_callback(watch)
        results: dict[int, object] = {}
        while True:
            done.clear()  # (before the look: a future done after it wakes the wait below)
            for rank, (ok, value) in list(outcomes.items()):
                if ok:
                    results[rank] = value
                elif isinstance(value, OSError):  # its worker is gone
                    raise self._lost(rank, value) from None
                else:
                    raise self._raised(rank, value, outcomes, done) from value
            if len(results) == len(futures):
                return [results[rank] for rank in taken or range(len(futures))]
            ended = self._ended()
            if ended is not None:
                raise ended
            done.wait(JOB_POLL_SECONDS)  # until one more is done, or the job's next look

    def _lost(self, rank: int, error: OSError) -> WorkerError:
        """The WorkerError of rank ``rank``'s lost connection: its job ends and says why."""
        self._job_ended(JOB_GRACE_SECONDS)
        return self._failed("the connection to a worker", rank)

    def _raised(self, rank: int, error: BaseException, outcomes: dict, done) -> WorkerError:
        """The WorkerError of rank ``rank`` raising ``error``; every worker stopped."""
        self._stop()
        return WorkerError(
            f"rank {rank} of {self.size} ({self._device(rank)}) failed: "
            f"{type(error).__name__}: {error}; {self.AFTER_A_FAULT}"
        )

    def _ended(self) -> WorkerError | None:
        """The WorkerError of the workers' job, where it ended."""
        return self._failed("the workers' MPI job") if self._job.poll() is not None else None

    def _job_ended(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the workers' job to end."""
        started = time.monotonic()
        while self._job.poll() is None and time.monotonic() - started < seconds:
            time.sleep(0.01)

    def _failed(self, what: str, rank: int | None = None) -> WorkerError:
        """The WorkerError of a job that ended (its cause, :meth:`_cause`), or of a worker
        whose connection ``what`` was lost while its job went on; every worker stopped."""
        ended = self._job.poll() is not None
        cause = self._cause() if ended else f"rank {rank} ({self._device(rank)}) was lost"
        self._stop()
        if ended:
            what = f"the workers' MPI job ended (exit {self._exit})"
        return WorkerError(f"{what}: {cause}; {self.AFTER_A_FAULT}")

    def _kind(self) -> type:
        """The backend class of the workers' devices (what their cost models read)."""
        from ..backend import gpu_count
        from ..backend.cupy_backend import CupyBackend
        from ..backend.numpy_backend import NumpyBackend

        on_gpu = self.backend == "cupy" or self.backend is None and gpu_count() > 0
        return CupyBackend if on_gpu else NumpyBackend

    def _device(self, rank: int) -> str:
        """What rank ``rank`` drives, in words."""
        return f"{'GPU' if self._kind().name == 'cupy' else 'CPU process'} {rank}"

    def _cause(self) -> str:
        """What the job printed about its failure: a rank's own line (it raised), or the
        launcher's about the process that ended (its rank and device: named by Open MPI,
        found from its pid in MPICH's), else what it said last (:func:`_launcher_says`)."""
        self._log.seek(0)
        text = self._log.read().decode(errors="replace")
        raised = re.search(r"rank \d+ of \d+ failed: .*", text)
        if raised:
            return raised.group(0).strip()
        noticed = _open_mpi_noticed(text)
        if noticed:  # (its pid may read 0: this process knows it)
            rank, how = noticed
            pid = next((p for p, r in self._pids.items() if r == rank), "unknown")
            return f"rank {rank} ({self._device(rank)}, pid {pid}) ended: {how}"
        ended = re.search(r"PID (\d+) RUNNING", text)
        how = re.search(r"EXIT STRING: (.*)", text) or re.search(r"(EXIT CODE: \d+)", text)
        if ended and int(ended.group(1)) in self._pids:
            rank = self._pids[int(ended.group(1))]
            cause = how.group(1).strip().lower() if how else "no exit status"
            return f"rank {rank} ({self._device(rank)}, pid {ended.group(1)}) ended: {cause}"
        return _launcher_says(text)

    def _stop(self) -> None:
        """End the workers' job (the whole process group: a rank stuck in MPI too)."""
        job, self._job = self._job, None
        if job is None:
            return
        if self._opened:  # (before the workers go: their buffers are freed with them)
            _closed(self._opened)
        _kill_group(job.pid)  # (also after mpiexec ended: a rank or a proxy it left behind)
        _remove_handed(self._prefix)  # (a call that failed after rank 0 wrote its result)
        self._finalizer.detach()
        self._exit = job.wait()
        self._log.close()
        self._held.clear()
        if self._client is not None:  # the scheduler forgets them
            started = time.monotonic()
            while self._workers() and time.monotonic() - started < 10:
                time.sleep(0.02)

    def _workers(self) -> list[str]:
        """The addresses of this cluster's workers that the scheduler knows (by the resource
        each was started with: a scheduler given may have others)."""
        known = _every_worker(self._client).items()
        return [address for address, info in known if self._tag in info.get("resources", {})]

    def _parts(self, graph, how: dict) -> list:
        """Each worker's part of ``graph``, cut here once as ``how`` says (as
        :func:`~bspgraph.enactor.layout.distribute` cuts), for its rank's call alone."""
        return cut(graph, self.size, **how)

    def _token(self, graph) -> int:
        """This cluster's number for ``graph`` (the workers' key for it)."""
        token = self._tokens.get(graph)
        if token is None:
            token = self._tokens[graph] = next(self._numbers)
        return token


class Deployment(Cluster):
    """Runs on the workers of a Dask deployment already running, one rank a worker: the
    first ``workers`` of ``client``'s (all by default), ranked by their names (dask-cuda's
    are their GPUs), each with one device (a CPU process on NumPy; on CuPy the first GPU
    it sees, as dask-cuda sets them, or of the workers on a host that see the same GPUs,
    each its own in turn). No MPI: the ranks meet over the workers' own connections
    (:class:`~bspgraph.comm.engine.EngineComm`: a collective a Dask call a peer, where MPI's
    cost microseconds) and, on GPUs, over NCCL (the payloads, and the small collectives on a
    communicator of their own). A run goes to a Dask actor on each worker, which runs it on
    its own thread (its worker's event loop stays free to carry the collectives).

    Faults end the call on every worker with one :class:`~bspgraph.exceptions.WorkerError`
    naming the rank, its worker and the cause, and leave the workers running (they are the
    user's): a rank that raises tells its peers, a worker that dies is seen by the caller,
    which ends the others' waits. The next call starts on the deployment's workers afresh.
    :meth:`close` drops this process's actors and leaves the client open.
    """

    AFTER_A_FAULT = "the call ended on every worker (the next run starts on them afresh)"

    def __init__(self, client, workers: int | None = None, *, backend: str | None = None):
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise ValueError(f"cluster(workers={workers!r}): expected a count >= 1")
        self._given, self._wanted = client, workers
        self._addresses: list[str] = []
        self._session: str | None = None
        super().__init__(workers or 1, backend=backend)

    def __repr__(self) -> str:
        state = "running" if self._running() else "stopped"
        return f"Deployment(workers={self.size}, backend={self.backend!r}, {state})"

    def close(self) -> None:
        """Drop this process's actors on the workers (the workers and the client stay)."""
        self._stop()
        if self._client is not None and self._client is not self._given:
            self._client.close()
        self._client = None

    def _running(self) -> bool:
        return self._session is not None

    def _start(self) -> None:
        """Pick the workers, then an actor on each with the session's communicator."""
        if self._client is None:
            self._client = _direct(self._given)
        known = _every_worker(self._client)
        ranked = sorted(known, key=lambda a: _worker_order(known[a].get("name"), a))
        wanted = len(ranked) if self._wanted is None else self._wanted
        if wanted > len(ranked) or not ranked:
            raise DeviceError(
                f"bg.cluster(client=...): {wanted or 1} workers asked for, the deployment has "
                f"{len(ranked)}"
            )
        self.size, self._addresses = wanted, ranked[:wanted]
        self._session = f"{self._prefix}-{time.time_ns():x}"
        self._client.run(_install_engine, workers=self._addresses)
        made = [
            self._client.submit(
                _EngineRank,
                self._session,
                rank,
                self._addresses,
                actor=True,
                workers=[address],
                allow_other_workers=False,
                pure=False,
            )
            for rank, address in enumerate(self._addresses)
        ]
        with self._client.as_current():  # (each actor bound to it: called straight)
            self._actors = [future.result() for future in made]
        self._pids = {}
        self._held.clear()

    def _stop(self, lost: str | None = None) -> None:
        """End the session on its workers that live (a wait there raises), but ``lost``
        (a dead worker's address, which the scheduler may list a while yet: a call to it
        would wait for its connection's timeout, 30 s), and drop its actors."""
        session, self._session = self._session, None
        if session is None:
            return
        self._actors = []
        self._held.clear()
        try:
            alive = _every_worker(self._client)
            self._client.run(
                _end_session, session, "the call ended on another rank",
                workers=[a for a in self._addresses if a in alive and a != lost],
            )  # fmt: skip
        except Exception:  # (the client closed, or a worker went meanwhile: nothing to end)
            pass

    def _lost(self, rank: int, error: OSError) -> WorkerError:
        self._stop(lost=self._addresses[rank])
        return WorkerError(
            f"rank {rank} of {self.size} ({self._device(rank)}) was lost: "
            f"{type(error).__name__}: {error}; {self.AFTER_A_FAULT}"
        )

    def _raised(self, rank: int, error: BaseException, outcomes: dict, done) -> WorkerError:
        """As a cluster's, naming the rank that raised first: a peer's abort (its waits
        ending on that rank's failure) waits a moment for that rank's own error."""
        started = time.monotonic()
        while isinstance(error, AbortedError) and time.monotonic() - started < JOB_GRACE_SECONDS:
            first = next(
                (
                    (r, value)
                    for r, (ok, value) in sorted(outcomes.items())
                    if not ok and not isinstance(value, AbortedError)
                ),
                None,
            )
            if first is not None:
                rank, error = first
                break
            done.clear()
            done.wait(JOB_POLL_SECONDS)
        return super()._raised(rank, error, outcomes, done)

    def _ended(self) -> WorkerError | None:
        return None  # (a worker that dies ends its actor's call: :meth:`_lost`)

    def _device(self, rank: int) -> str:
        return f"worker {self._addresses[rank]}"


def _every_worker(client) -> dict:
    """Every worker the scheduler of ``client`` knows, by address: its facts."""
    every = {"n_workers": -1} if _counts_workers() else {}  # (else five, in some releases)
    return client.scheduler_info(**every)["workers"]


def _direct(client):
    """``client``, or where it calls workers through the scheduler, a client of its
    scheduler that calls them straight (a call and a graph's parts, one hop each way)."""
    if client.direct_to_workers:
        return client
    from distributed import Client

    address, security = client.scheduler.address, client.security
    return Client(
        address,
        security=security,
        direct_to_workers=True,
        timeout=CONNECT_TIMEOUT,
        set_as_default=False,  # (the caller's stays its default)
    )


def _worker_order(name, address: str) -> tuple:
    """A worker's place in rank order: by its name, numbers first and in order."""
    text = str(name)
    return (0, int(text), address) if text.isdigit() else (1, text, address)


def _install_engine(dask_worker) -> None:
    """On a worker (``Client.run``): its handler for collectives' parts."""
    from ..comm import engine

    engine.install(dask_worker)


def _end_session(session: str, reason: str) -> None:
    """On a worker (``Client.run``, on its event loop): end ``session``'s waits and drop it."""
    from ..comm import engine

    engine.abort(session, reason)
    engine.forget(session)


class _EngineRank:
    """A deployment worker's actor: one rank of ``session``, its communicator made here.
    Its ``run`` is a plain method, which Dask runs on the actor's own thread."""

    def __init__(self, session: str, rank: int, addresses: list[str]) -> None:
        from distributed import get_worker

        from ..comm.engine import EngineComm
        from ..comm.mpi import DEFAULT_TIMEOUT, TIMEOUT_ENV

        timeout = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))
        self.comm = EngineComm(
            get_worker(), session, rank, addresses, timeout=timeout if timeout > 0 else None
        )
        self.held: dict = {}

    def run(self, call: bytes, part=None):
        """As :meth:`_Rank.run`, on this rank's session."""
        import cloudpickle

        token, work, backend, run, handed = cloudpickle.loads(call)
        made = functools.partial(_engine_transport, self.comm)
        return _run_on_worker(self.held, made, token, part, work, backend, run, handed)


def _engine_transport(comm, backend):
    """NCCL over ``comm`` where the ranks are on GPUs, each its own, else MPI's over it."""
    from ..backend import gpu_count
    from ..comm.mpi import MPITransport

    if backend != "numpy" and gpu_count():
        if comm.Split_type().Get_size() <= gpu_count():
            from ..comm.nccl import NCCLTransport

            return NCCLTransport(comm)
    return MPITransport(comm, backend=backend)


GPU_WORKERS.start = Cluster  # (runs with devices=P on GPUs, no cluster named: workers)


@functools.cache
def _counts_workers() -> bool:
    """Whether Dask's ``Client.scheduler_info`` takes ``n_workers``: the releases between
    distributed's pull requests 9045 and 9308 (mid-2025 to mid-2026) list five workers
    unless told -1; older ones list every worker and take no such argument."""
    from distributed import Client

    return "n_workers" in inspect.signature(Client.scheduler_info).parameters


def _ended(pid: int, prefix: str) -> None:
    """At collection or exit: the workers' job stopped and its files in SHARED removed."""
    _kill_group(pid)
    _remove_handed(prefix)


def _remove_handed(prefix: str) -> None:
    """Remove the files of SHARED named from ``prefix`` that no caller took."""
    for path in glob.glob(os.path.join(SHARED, glob.escape(prefix) + "-*")):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _kill_group(pid: int) -> None:
    """SIGKILL to the process group of ``pid`` (the workers' job), if it is still there."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_HELD: dict = {}  # in a worker: its transport, and the graphs it was sent by token


def _placement(mpiexec: str, hosts: list[str] | None) -> list[str]:
    """``mpiexec``'s options that place its ranks: on ``hosts`` in turn (None: this machine),
    MPICH's ``-hosts`` or Open MPI's ``--host`` (which counts one slot a host unless told to
    oversubscribe); and with Open MPI bound to no core, as the benchmarks' ``mpiexec
    --bind-to none`` (its default binds each of one or two ranks to one core, where a
    worker's threads, the run's, Dask's event loop and NCCL's proxy, would take turns; MPICH
    binds none)."""
    if _launcher(mpiexec) != "Open MPI":
        return [] if hosts is None else ["-hosts", ",".join(hosts)]
    unbound = ["--bind-to", "none"]
    if hosts is None:
        return unbound
    return ["--host", ",".join(hosts), "--oversubscribe", "--map-by", "node", *unbound]


@functools.cache
def _launcher(mpiexec: str) -> str:
    """Whose ``mpiexec`` it is: "Open MPI" or "MPICH" (Hydra, and any other)."""
    try:
        said = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "MPICH"
    return "Open MPI" if "Open MPI" in said or "OpenRTE" in said else "MPICH"


def _open_mpi_noticed(text: str) -> tuple[int, str] | None:
    """The rank and how it ended, where Open MPI's ``mpiexec`` says that a process ended
    ("... noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).")."""
    noticed = re.search(
        r"process rank (\d+) with PID \d+ on node \S+ (exited on .*?)\.?$", text, re.M
    )
    return None if noticed is None else (int(noticed.group(1)), noticed.group(2).lower())


def _launcher_says(text: str) -> str:
    """The line of a launcher's output that says what went wrong: the first line inside a box
    of dashes (Open MPI's and MPICH's messages: "mpirun has detected an attempt to run as
    root."), else the last line with a word in it."""
    worded = [line.strip(" =") for line in text.splitlines() if re.search(r"[A-Za-z]", line)]
    boxed = re.search(r"^-{10,}\s*$\n(.*?)^-{10,}\s*$", text, re.MULTILINE | re.DOTALL)
    if boxed:
        inside = [line.strip() for line in boxed.group(1).splitlines() if line.strip()]
        if inside:
            return inside[0]
    return worded[-1] if worded else "no output"


class _Rank:
    """A worker's actor (Dask's): a call to it goes from the caller straight to its worker,
    not through the scheduler's tasks (two NumPy workers on 2 cores: 2 ms a call against 11).
    Its methods run on the worker's event loop (Dask awaits an actor's coroutine there), one
    thread for MPI and every run, so that a GPU made current there stays so; no hop to the actor's
    own thread and back, and no thread beside the run taking the interpreter's lock (two
    NumPy workers on 2 cores, BFS on rmat8: 2.4-3.4 ms a call against 2.5-5.7; two H200
    workers, rmat12: alike, 12.4-13.4 against 12.1-12.6). The scheduler keeps a worker whose
    loop a long run holds (no time to live: the caller watches the workers' job)."""

    async def rank(self) -> tuple[int, int]:
        """This worker's MPI rank and process id (MPI starts here: on the loop, as the runs)."""
        from mpi4py import MPI

        return MPI.COMM_WORLD.Get_rank(), os.getpid()

    async def run(self, call: bytes, part=None):
        """A run on this worker (:func:`_run_on_worker`): ``call`` its pickled token,
        primitive, backend, options and hand-over; ``part`` this worker's part of a graph
        sent for it (None: kept from an earlier call)."""
        import cloudpickle

        token, work, backend, run, handed = cloudpickle.loads(call)
        return _run_on_worker(_HELD, _transport, token, part, work, backend, run, handed)


async def _settled(future, rank: int, outcomes: dict, done: threading.Event) -> None:
    """Await an actor's future: ``outcomes[rank]`` its (True, result) or (False, error), then
    ``done`` set (the waiter reads it there, with no further trip to the event loop)."""
    try:
        outcomes[rank] = (True, await future)
    except BaseException as error:  # (cancelled too: the waiter must not wait on for it)
        outcomes[rank] = (False, error)
        if not isinstance(error, Exception):
            raise
    finally:
        done.set()


def _run_on_worker(
    held: dict, made, token: tuple, graph, work, backend, run: dict, handed: HandOver
):
    """In a worker: the run of ``work`` (a primitive or a chain of runs) on its rank's
    transport (``made(backend)``, once: kept in ``held`` with the graphs), ``graph`` (its
    part) kept under ``token`` (None: sent before); rank 0's (result, stats), each large array
    of the result lent from its GPU or handed over in shared memory where it runs on the
    caller's host (:func:`_handed_over`)."""
    transport = held.get("transport")
    if transport is None:
        transport = held["transport"] = made(backend)
    graphs = held.setdefault("graphs", {})
    if graph is not None:
        graphs.pop(token, None)
        graphs[token] = graph
        while len(graphs) > KEPT_GRAPHS:
            graphs.pop(next(iter(graphs)))
    opened = held.setdefault("opened", {})  # the caller's lent params' handles, open here
    run = {name: _taken(value, True, opened) for name, value in run.items()}
    lending = handed.borrows and handed.host == socket.gethostname()
    lending = lending and not transport.backend.capabilities.virtual_devices  # (on a GPU)
    # rank 0's result is the one read: no other rank's is made, unless a chain's runs read
    # each other's results on every rank
    one_run = isinstance(work, Primitive)
    transport.result_rank = 0 if one_run else None
    runner = enact if one_run else enact_chain
    result, stats = runner(work, graphs[token], transport=transport, result_device=lending, **run)
    if transport.rank != 0:
        return None
    if lending:
        return _lent(result, held.setdefault("lent", {})), stats
    if handed.host != socket.gethostname():  # another machine's memory: through Dask
        return result, stats
    return _handed_over(result, handed.prefix), stats


@dataclasses.dataclass(frozen=True)
class HandOver:
    """Where rank 0 may hand its result over: the caller's host, the prefix of the file
    names there (this cluster's and the call's), and whether the caller borrows large GPU
    arrays through CUDA IPC (:class:`Lent`)."""

    host: str
    prefix: str
    borrows: bool = False


@dataclasses.dataclass(frozen=True)
class Lent:
    """A result array lent from a worker's GPU memory: its CUDA IPC handle (of an allocation
    of its own: a handle names a whole allocation), the GPU (by PCI bus id: the caller may
    number its GPUs otherwise), dtype and shape; what travels through Dask in its place."""

    handle: bytes
    bus: str
    dtype: str
    shape: tuple


def _lent(values: dict, buffers: dict) -> dict:
    """``values`` (rank 0's result on its GPU, or a run's params in the caller) with each GPU
    array of HANDED_BYTES or more copied into a lending buffer of ``buffers`` and lent as a
    :class:`Lent`, the other GPU arrays on the host. The buffers (``(bytes, k)``: the k-th of
    that size, with its handle) are kept and reused by size from run to run (a run's are
    read before the next starts), so that the borrower opens each handle once: opening one
    maps the memory anew, which costs more than the copy."""
    import cupy

    lent, used = {}, {}
    for name, value in values.items():
        if not hasattr(value, "__cuda_array_interface__"):
            lent[name] = value
        elif value.nbytes < HANDED_BYTES:
            lent[name] = to_host(value)
        else:
            key = (value.nbytes, used.get(value.nbytes, 0))
            used[value.nbytes] = key[1] + 1
            with value.device:
                if key not in buffers:
                    memory = cupy.cuda.Memory(value.nbytes)
                    buffers[key] = (memory, cupy.cuda.runtime.ipcGetMemHandle(memory.ptr))
                memory, handle = buffers[key]
                copy = cupy.ndarray(value.shape, value.dtype, cupy.cuda.MemoryPointer(memory, 0))
                copy[...] = value
                cupy.cuda.get_current_stream().synchronize()  # copied before it is read
            lent[name] = Lent(handle, value.device.pci_bus_id, value.dtype.str, value.shape)
    return lent


@dataclasses.dataclass(frozen=True)
class Handed:
    """A result array in a file of SHARED: what travels through Dask in its place."""

    path: str
    dtype: str
    shape: tuple


def _handed_over(result: dict, prefix: str) -> dict:
    """``result`` with each array of HANDED_BYTES or more written to a file of SHARED (where
    it has room for them twice), a :class:`Handed` in its place: a copy in memory here and a
    map in the caller, where Dask's transfer pickles it through a socket (268 MB: 0.3 s)."""
    large = {n: v for n, v in result.items() if getattr(v, "nbytes", 0) >= HANDED_BYTES}
    needed = 2 * sum(value.nbytes for value in large.values())
    if not large or not os.path.isdir(SHARED) or shutil.disk_usage(SHARED).free < needed:
        return result
    handed = dict(result)
    for name, value in large.items():
        value = to_host(value)
        path = os.path.join(SHARED, f"{prefix}-{name}")
        mapped = np.memmap(path, dtype=value.dtype, mode="w+", shape=value.shape)
        mapped[...] = value
        del mapped  # (unmapped: the file holds it)
        handed[name] = Handed(path, value.dtype.str, value.shape)
    return handed


def _taken(value, on_device: bool = False, opened: dict | None = None):
    """A result's value as the caller keeps it: a :class:`Handed` array mapped from its file
    (then removed: the map keeps the memory until the array goes), a :class:`Lent` one
    copied from the worker's GPU (:func:`_borrowed`, its handle kept in ``opened``), else
    ``value``."""
    if isinstance(value, Lent):
        return _borrowed(value, on_device, opened)
    if not isinstance(value, Handed):
        return value
    mapped = np.memmap(value.path, dtype=np.dtype(value.dtype), mode="r+", shape=value.shape)
    os.unlink(value.path)
    return np.asarray(mapped)  # (an ndarray; its base, the map)


def _borrowed(value: Lent, on_device: bool, opened: dict):
    """A :class:`Lent` array copied from the worker's GPU memory: to this process's current
    GPU with ``on_device``, else to the host (through page-locked memory, as
    :func:`~bspgraph.backend.to_host` copies). Its handle is opened once and kept open in
    ``opened`` (handle: its device and pointer here) until the workers stop."""
    import cupy

    runtime = cupy.cuda.runtime
    dtype = np.dtype(value.dtype)
    nbytes = int(np.prod(value.shape)) * dtype.itemsize
    here = cupy.cuda.Device()  # (where a result kept on a device goes)
    if value.handle not in opened:
        lender = runtime.deviceGetByPCIBusId(value.bus)
        with cupy.cuda.Device(lender):
            opened[value.handle] = (lender, runtime.ipcOpenMemHandle(value.handle))
    lender, pointer = opened[value.handle]
    with cupy.cuda.Device(lender):
        memory = cupy.cuda.UnownedMemory(pointer, nbytes, None)
        lent = cupy.ndarray(value.shape, dtype, cupy.cuda.MemoryPointer(memory, 0))
        if not on_device:
            return to_host(lent)
    with here:
        kept = cupy.empty(value.shape, dtype)
        kept.data.copy_from_device(lent.data, nbytes)
        cupy.cuda.get_current_stream().synchronize()  # (read before the worker's next run)
    return kept


def _closed(opened: dict) -> None:
    """Every handle of ``opened`` (:func:`_borrowed`) closed, where its worker still lives."""
    import cupy

    for lender, pointer in opened.values():
        with cupy.cuda.Device(lender):
            try:
                cupy.cuda.runtime.ipcCloseMemHandle(pointer)
            except cupy.cuda.runtime.CUDARuntimeError:  # (its worker gone before)
                pass
    opened.clear()


def _transport(backend):
    """NCCL where the ranks are on GPUs and each has its own, else MPI."""
    from mpi4py import MPI

    from ..backend import gpu_count
    from ..comm.mpi import MPITransport

    if backend != "numpy" and gpu_count():
        ranks_here = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
        if ranks_here <= gpu_count():
            from ..comm.nccl import NCCLTransport

            return NCCLTransport()
    return MPITransport(backend=backend)

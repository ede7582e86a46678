"""The NCCL transport: one process per GPU, payloads GPU to GPU with CuPy's NCCL bindings.

MPI starts the processes and carries everything small: the NCCL unique id (a broadcast), each
round's message headers (``message.describe``: int64 arrays, in one ``Alltoall`` of fixed slots
where they fit), the scalars and the stop test
of the enactor and the fingerprints. The payloads (the final result's too) never touch the
host: one NCCL group moves every column of every message straight from the array that holds
it (no packing), into one receive buffer, cut by ``message.unpack`` as MPI's. Faults are handled
as by :class:`~bspgraph.comm.mpi.MPITransport` (abort on an exception, the launcher on a dead
rank, the watchdog on a hang, which also covers the wait for NCCL to finish).

Launch as for MPI, one rank per GPU::

    mpiexec -n 2 python -m bspgraph.cli run bfs graph.mtx --transport nccl
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..backend import gpu_count
from ..exceptions import DeviceError
from .message import arrays_of, describe, described, padded_size, unpack
from .mpi import MPITransport, _mpi
from .transport import Inbox, RoundStats, Send


class NCCLTransport(MPITransport):
    """Moves Updates between GPUs with NCCL point-to-point sends, one rank per GPU.

    Parameters
    ----------
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``; it starts NCCL and carries the small messages.
    timeout : float, optional
        As for :class:`~bspgraph.comm.mpi.MPITransport`.

    Raises
    ------
    DeviceError
        No GPU, or more ranks on a node than it has GPUs (NCCL needs one GPU per rank).
    """

    def __init__(self, comm=None, *, timeout: float | None = None):
        super().__init__(comm, backend="cupy", timeout=timeout)
        from cupy.cuda import nccl

        node_ranks = self.comm.Split_type(_mpi().COMM_TYPE_SHARED).Get_size()
        if node_ranks > gpu_count():
            raise DeviceError(
                f"transport 'nccl': {node_ranks} ranks on this node, {gpu_count()} GPUs: "
                "NCCL needs one GPU per rank"
            )
        self._nccl = nccl
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = self._collective("bcast", self.comm.bcast, uid)
        with self.backend.xp.cuda.Device(self.backend.device):
            self.nccl = nccl.NcclCommunicator(self.size, uid, self.rank)

    def __repr__(self) -> str:
        return f"NCCLTransport(rank={self.rank}, size={self.size}, gpu={self.backend.device})"

    def exchange_round(
        self, sends: Sequence[Send], *, num_vertices: int
    ) -> tuple[Inbox, RoundStats]:
        cp, nccl = self.backend.xp, self._nccl
        outgoing, counts = self._start_round(sends, num_vertices)
        (arriving,) = self._alltoallv([describe(per_peer) for per_peer in outgoing])
        sizes = [_sizes(described(header)) for header in arriving]  # shapes, nothing pickled
        starts = np.cumsum([0] + [sum(p for _, p in per_src) for per_src in sizes]).tolist()
        buffer = cp.empty(starts[-1], dtype=cp.uint8)  # every source's arrays, one after another
        stream = cp.cuda.get_current_stream()
        sent = []  # the arrays sent, alive until NCCL is done with them
        nccl.groupStart()  # sends and receives of a pair match in order: column by column
        for dst, messages in enumerate(outgoing):
            for message in messages:
                for column in arrays_of(message):
                    if column.nbytes:
                        sent.append(_on_device(cp, column))
                        self.nccl.send(sent[-1].data.ptr, column.nbytes, nccl.NCCL_UINT8, dst,
                                       stream.ptr)  # fmt: skip
        for src, per_src in enumerate(sizes):
            offset = starts[src]
            for nbytes, padded in per_src:
                if nbytes:
                    self.nccl.recv(buffer.data.ptr + offset, nbytes, nccl.NCCL_UINT8, src,
                                   stream.ptr)  # fmt: skip
                offset += padded
        nccl.groupEnd()
        self._collective("nccl send/recv", stream.synchronize)  # the sent arrays live until here
        arrived = [u for src, header in enumerate(arriving) if sizes[src]
                   for u in unpack(header, buffer, starts[src])]  # fmt: skip
        return self._finish_round(arrived, counts)


def _on_device(cupy, column):
    """``column`` as a contiguous array on this process's GPU (the array itself when it is)."""
    if isinstance(column, cupy.ndarray) and column.flags.c_contiguous:
        return column
    return cupy.ascontiguousarray(cupy.asarray(column))


def _sizes(layout) -> list[tuple[int, int]]:
    """(bytes, bytes padded to WIRE_ALIGN) of every array of every message of ``layout``
    (:func:`~bspgraph.comm.message.described`): where ``unpack`` finds them in a buffer."""
    sizes = []
    for length, columns, _block in layout:
        for _name, dtype, shape in columns:
            nbytes = length * math.prod(shape) * np.dtype(dtype).itemsize
            sizes.append((nbytes, padded_size(nbytes)))
    return sizes

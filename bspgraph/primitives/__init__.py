"""The primitives: each an operator pipeline plus its multi-device contract."""

from .bc import BCResult, betweenness_centrality
from .bfs import BFS, BatchedBFS, BFSResult, bfs
from .cc import CC, CCResult, connected_components
from .kcore import CoreResult, KCore, core_number
from .pagerank import PageRank, PageRankResult, pagerank
from .sssp import SSSP, SSSPResult, sssp
from .tc import TC, TCResult, triangle_count

__all__ = ["BFS", "BFSResult", "SSSP", "SSSPResult", "bfs", "sssp"]
__all__ += ["BCResult", "betweenness_centrality", "CC", "CCResult", "connected_components"]
__all__ += ["PageRank", "PageRankResult", "pagerank", "TC", "TCResult", "triangle_count"]
__all__ += ["CoreResult", "KCore", "core_number", "BatchedBFS"]
from .eigenvector import Eigenvector, eigenvector_centrality  # noqa: E402
from .hits import HITS, HITSResult, hits  # noqa: E402
from .katz import Katz, katz_centrality  # noqa: E402
from .pagerank_from import PageRankFrom, pagerank_from  # noqa: E402
from .power import CentralityResult  # noqa: E402

__all__ += ["CentralityResult", "Eigenvector", "HITS", "HITSResult", "Katz", "PageRankFrom"]
__all__ += ["eigenvector_centrality", "hits", "katz_centrality", "pagerank_from"]
from .closeness import closeness_centrality, harmonic_centrality  # noqa: E402

__all__ += ["closeness_centrality", "harmonic_centrality"]
from .scc import SCC, SCCResult, strongly_connected_components  # noqa: E402

__all__ += ["SCC", "SCCResult", "strongly_connected_components"]

#!/usr/bin/env bash
# networkx's own tests of the functions bspgraph serves, every dispatchable call sent to the
# bspgraph backend; fallback to networkx is ON for the functions bspgraph does not serve (the
# tests' helpers) and OFF for the ones it serves (tests/nx/strict_fallback.py), so that a call
# bspgraph refuses (NotImplementedError) is reported by networkx's harness as an xfail.
#   tests/nx/run_networkx_tests.sh [extra pytest arguments]
# Needs the entry points (pip install -e . --no-deps) or this checkout on PYTHONPATH with an
# installed bspgraph's metadata; prints pytest's summary per module and the refusal reasons.
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python}
export PYTHONPATH="$PWD:$PWD/tests/nx${PYTHONPATH:+:$PYTHONPATH}"
export NETWORKX_TEST_BACKEND=bspgraph NETWORKX_FALLBACK_TO_NX=True
MODULES=(
  traversal.tests.test_bfs
  tests.test_dag
  shortest_paths.tests.test_generic
  shortest_paths.tests.test_unweighted
  shortest_paths.tests.test_weighted
  tests.test_distance_measures
  components.tests.test_connected
  components.tests.test_strongly_connected
  components.tests.test_weakly_connected
  link_analysis.tests.test_pagerank
  link_analysis.tests.test_hits
  centrality.tests.test_katz_centrality
  centrality.tests.test_eigenvector_centrality
  centrality.tests.test_degree_centrality
  centrality.tests.test_betweenness_centrality
  centrality.tests.test_closeness_centrality
  centrality.tests.test_harmonic_centrality
  tests.test_cluster
  tests.test_core
)
status=0
for module in "${MODULES[@]}"; do
  out=$("$PYTHON" -m pytest --pyargs "networkx.algorithms.$module" -q -rxf -p no:cacheprovider -p strict_fallback "$@" 2>&1)
  code=$?
  [ $code -ne 0 ] && status=1
  echo "== $module: $(echo "$out" | tail -1)"
  echo "$out" | grep -E "^(XFAIL|FAILED)" | sed -E 's/^(XFAIL|FAILED) [^ ]*::/  \1 /' | sort | uniq -c | sort -rn | head -40
done
exit $status

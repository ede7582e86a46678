#!/usr/bin/env bash
# Every GPU check and measurement of this repository in one call on a GPU machine, for when
# device time is scarce: run from the repository root, not installed (PYTHONPATH=.).
#
#   bash benchmarks/on_device.sh [OUTDIR]          # OUTDIR: default $OUT, else ./device-out
#   STEPS="tests gpu" bash benchmarks/on_device.sh  # only some steps
#
# Steps (each under its own time limit; one that fails or runs out is reported, the next runs):
#   tests   pytest -m gpu over every test file (CuPy = NumPy, fused = generic, the transports
#           under mpiexec, the cluster's GPU workers: Dask's wheels of .whl/ installed first where
#           the image lacks it); with two GPUs, split: half of tests/test_gpu.py on GPU 0 alone,
#           beside the rest on both (OUTDIR/tests-a.txt, tests-b.txt)
#   gpu     one GPU against plain cupyx, rmat 22 and 24, every algorithm but TC
#   grid    the same on a 4096 x 4096 grid (BFS, SSSP, PageRank, CC)
#   lanes   lanes per row of the row reduction (benchmarks.row_reduce)
#   elementwise  CuPy's element-wise kernels against the backend's grid-stride passes
#   reductions  whole-array reductions: the backend's module against CuPy's, CUB and plain
#   timeline  rmat24 BFS auto and BC: loop against kernel time (ncu), host round trip, cProfile
#   pull    PageRank's pull product on rmat24 in L2-minded variants (benchmarks.pull_variants)
#   multi   with two or more GPUs: mpiexec, one rank per GPU over NCCL, rmat SCALE (default 25; the
#           issues' four-GPU gates are at SCALE=26), and the model
#   anchor  with two or more GPUs: the plain CuPy + NCCL BFS of ../shared/anchors/mgpu_bfs.py at
#           rmat SCALE, where a copy lies in .anchor/ (carry it: the device has no ../shared)
#   empty   with two or more GPUs: an empty superstep lifted on every rank, over NCCL and MPI
#   onecall with two or more GPUs: multi's runs again from one Python call on bg.cluster
#           workers, against multi's rows (benchmarks.one_call: issue 50's gates); where the
#           image lacks Dask's distributed, the wheels of a folder .whl/ are installed first
#   nccl-phases  with two or more GPUs: each rank's supersteps over NCCL at rmat SCALE, phase by
#           phase with the transport's own steps (benchmarks.phases --transport nccl)
#   scaling26 scaling25 scaling24  (not by default; with four or more GPUs) strong scaling over
#           1, 2, 4 (8) GPUs in one MPI job per graph: rmat 26 with every communicator and
#           fanout, rmat 25 and 24 with fewer (with rmat 26 on 4: weak scaling, rmat 24 a GPU)
# Each step's output is OUTDIR/STEP.txt (the rows of multi and scaling* in OUTDIR/STEP.json
# too); the summary (exit code and seconds per step, then each table) prints last.
set -u
out=${1:-${OUT:-device-out}}
mkdir -p "$out"
export PYTHONPATH=. PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # the device image runs as root
steps=${STEPS:-tests gpu grid lanes elementwise reductions timeline pull multi anchor empty onecall nccl-phases}
scale=${SCALE:-25}  # the several-GPU steps' R-MAT scale
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
: > "$out/summary.txt"

run_step() {  # name, seconds, command...
  local name=$1 limit=$2 started=$SECONDS rc
  shift 2
  case " $steps " in *" $name "*) ;; *) return ;; esac
  timeout "$limit" "$@" > "$out/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc, $((SECONDS - started)) s" >> "$out/summary.txt"
}

if ! python3 -c "import distributed" 2> /dev/null && ls .whl/*.whl > /dev/null 2>&1; then
  # (Dask: the cluster's GPU tests, onecall; installed with its wheels' dependencies: a
  # --target folder of them did not import)
  python3 -m pip install -q --no-index --find-links .whl distributed
fi
tests_step() {  # every GPU test; on two GPUs or more, two halves at once
  local ids="$out/tests.ids" pick='import sys, pytest; sys.exit(pytest.main(["-q", "-m", "gpu", "-p", "no:cacheprovider", *open(sys.argv[1]).read().splitlines()]))'
  python3 -m pytest -q -m gpu --collect-only -p no:cacheprovider tests 2> /dev/null | grep '::' > "$ids"
  if [ "$gpus" -lt 2 ]; then
    python3 -c "$pick" "$ids"
    return
  fi
  local two='test_two_gpus|test_a_peer_copy|test_a_graph_s_kernels'  # (tests that need two)
  grep '^tests/test_gpu.py' "$ids" | grep -Ev "$two" | awk 'NR % 2 == 0' > "$ids.a"
  grep -vxFf "$ids.a" "$ids" > "$ids.b"
  CUDA_VISIBLE_DEVICES=0 python3 -c "$pick" "$ids.a" > "$out/tests-a.txt" 2>&1 &
  local half=$!
  python3 -c "$pick" "$ids.b" > "$out/tests-b.txt" 2>&1
  local rc=$?
  wait "$half" || rc=1
  grep -h -E '^FAILED|^ERROR' "$out/tests-a.txt" "$out/tests-b.txt"
  tail -q -n 1 "$out/tests-a.txt" "$out/tests-b.txt"
  return $rc
}
export out gpus
export -f tests_step
run_step tests 300 bash -c tests_step
run_step gpu 300 python3 -W ignore -m benchmarks.gpu --scale 22 24 --repeat 3 \
  --algorithms bfs sssp pagerank cc bc
run_step grid 240 python3 -W ignore -m benchmarks.gpu --scale --grid 4096 \
  --algorithms bfs sssp pagerank cc
run_step lanes 120 python3 -W ignore -m benchmarks.row_reduce
run_step elementwise 60 python3 -W ignore -m benchmarks.elementwise
run_step reductions 120 python3 -W ignore -m benchmarks.reductions
timeline_step() {  # each algorithm: wall times and cProfile, then its kernels under ncu, summed
  for algorithm in bfs bc; do
    python3 -W ignore -m benchmarks.timeline --algorithm "$algorithm" > "$out/$algorithm.txt" 2>&1
    head -n 2 "$out/$algorithm.txt"
    ncu --clock-control none --profile-from-start off --csv --log-file "$out/$algorithm.csv" \
      --metrics gpu__time_duration.sum python3 -W ignore -m benchmarks.timeline --ncu \
      --algorithm "$algorithm" > /dev/null 2>&1 &&
      python3 -m benchmarks.timeline --kernels "$out/$algorithm.csv" | tail -n 1
  done
}
export out
export -f timeline_step
run_step timeline 240 bash -c timeline_step
run_step pull 180 python3 -W ignore -m benchmarks.pull_variants
if [ "$gpus" -ge 2 ]; then
  run_step multi 300 mpiexec -n "$gpus" --bind-to none python3 -W ignore -m benchmarks.multi_gpu \
    --transport nccl --scale "$scale" --repeat 3 --partitioners edge_balanced \
    --communicators selective butterfly --json "$out/multi.json"
  [ -s "$out/multi.json" ] && python3 -m benchmarks.bsp_model "$out/multi.json" >> "$out/multi.txt" 2>&1
  if [ -f .anchor/mgpu_bfs.py ]; then
    run_step anchor 240 mpiexec -n "$gpus" --bind-to none python3 .anchor/mgpu_bfs.py "$scale"
  fi
  empty_step() {  # issue 48's empty superstep (<= 60 us on two ranks, 80 on four), each transport
    for transport in nccl mpi; do
      mpiexec -n "$gpus" --bind-to none python3 -W ignore -m benchmarks.multi_gpu \
        --transport "$transport" --scale 20 --repeat 5 --algorithms empty \
        --partitioners edge_balanced --communicators selective | grep -E "^empty|transport"
    done
  }
  export gpus
  export -f empty_step
  run_step empty 120 bash -c empty_step
  run_step onecall 300 python3 -W ignore -m benchmarks.multi_gpu --transport cluster \
    --devices "$gpus" --scale "$scale" --repeat 3 --partitioners edge_balanced \
    --communicators selective butterfly --json "$out/onecall.json"
  if [ -s "$out/onecall.json" ] && [ -s "$out/multi.json" ]; then
    python3 -m benchmarks.one_call "$out/multi.json" "$out/onecall.json" >> "$out/onecall.txt"
  fi
  run_step nccl-phases 150 mpiexec -n "$gpus" --bind-to none python3 -W ignore \
    -m benchmarks.phases --transport nccl --scale "$scale" --algorithms bfs-auto bfs-push empty
fi
if [ "$gpus" -ge 4 ]; then
  sizes=$( ( echo 2 4; [ "$gpus" -ge 8 ] && echo 8; echo "$gpus") | tr ' ' '\n' | sort -nu | tr '\n' ' ')
  scaling() {  # scale, seconds, then the communicators
    local scale=$1 limit=$2
    shift 2
    run_step "scaling$scale" "$limit" mpiexec -n "$gpus" --bind-to none python3 -W ignore \
      -m benchmarks.multi_gpu --transport nccl --scale "$scale" --sizes $sizes --repeat 3 \
      --algorithms bfs-auto bfs-push sssp pagerank --partitioners edge_balanced \
      --communicators "$@" --json "$out/scaling$scale.json"
  }
  scaling 26 330 selective broadcast butterfly:1 butterfly:2 butterfly:4
  scaling 25 120 selective broadcast butterfly:2
  scaling 24 100 selective butterfly:2
fi

echo "== $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
cat "$out/summary.txt"
for name in $steps; do
  [ -f "$out/$name.txt" ] || continue
  echo "== $name"
  case $name in
    tests) tail -n 4 "$out/$name.txt" ;;
    gpu | grid) sed -n '/^graph /,$p' "$out/$name.txt" ;;
    scaling*) sed -n '/^algorithm /,$p' "$out/$name.txt" | grep . || tail -n 12 "$out/$name.txt" ;;
    *) grep -v -i warn "$out/$name.txt" | tail -n 24 ;;
  esac
done

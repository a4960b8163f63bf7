#!/usr/bin/env bash
# On the GPU machine: one call's worth of work, step by step, inside a time
# budget, every step's output in $OUT/session.log and its own log, the logs and
# any generated data packed so that the device tool's file limits (8 files,
# 16 MiB each) are kept.
#
# Usage: tools/device/session.sh BUDGET_S STEP...
#   data      tools/device/make-gpu-data.py (in the background from the start;
#             waited for before the first GPU-timed step)
#   build     libwick, the cuda tests, the benchmarks, the headless wick-trace
#   suite     the cuda suite's C tests (stage-capture, weight-store-cuda)
#   py:NAME   one torch test through run-python-cuda.sh
#   python    the torch tests through run-python-cuda.sh (remote's command first)
#   weightsN  bench-weight-store, CPU digests (WICK_WEIGHT_GPU_DIGESTS=0) then the GPU's (round N)
#   weightsdiag  bench-weight-store with its diagnostics (WICK_BENCH_WEIGHT_DIAGNOSTICS=1)
#   weightsx3 bench-weight-store, the default, 3 processes
#   weightsdisk the default, 3 processes, disk readers 16/8/16 (WICK_WEIGHT_DISK_READERS)
#   weightsc  bench-weight-store's contenders (RESULT weights contender=/pin=/first-eviction), 2 processes
#   stages    tools/device/bench-stages.sh (wick stage replay, bare graph, torch.cuda.CUDAGraph),
#             then its CONTENDER table (replay contenders at 128/512/2048 against bare and torch)
#   hotpath   bench-ring-hot-path: static + dlopen, then linked at start (LD_PRELOAD), cores 3 and 5;
#             RESULT lines: mode (static, dlopen, linked-at-start) x variant (session calls,
#             thread handle) against the floor of the same process
#   same      bench-graph-probe.py's SAME cells alone (Wick's stage, torch.cuda.CUDAGraph and a bare
#             graph of one library's kernels, one torch process)
#   hotpathab the same, ../src-before (another packed tree; WICK_HOTPATH_BEFORE names another
#             place) against this one, alternating
#   gptN      tests/bench/python/bench-torch-gpt.py (instrument vs plain vs profiler), the
#             package of this tree and, where .device-oldwick/wick holds one, an older
#             one's .py files beside it (this tree's _wick extension, or the older one's
#             when .device-oldwick/_wick.c is there), alternating, N pairs;
#             WICK_GPT_ARGS replaces its arguments (default: none, the benchmark's own: 30 rounds
#             of 6 steps, the modes in every order in turn, 3 torch.profiler rounds)
#   gptprofile  bench-torch-gpt.py under cProfile, 3 rounds of 10 steps, the instrumented steps
#             with memory tracking (WICK_GPT_PROFILE_MODE=instrument-no-memory: those without)
#   stagesproc  bench-stage-replay's bare, wick and torch-like contenders in 3 processes with
#             CUDA_MODULE_LOADING=LAZY and 3 with EAGER alternated, bench-torch-graph.py once
#             each way, then tools/device/stages-processes.py's STAGESPROC table (~60-100 s)
#   stagepool bench-stage-replay with its buffers pooled / after a large allocation
#   probe     tests/bench/stages/bench-graph-probe.py (why torch's 128-node graph is faster; Wick's
#             stage beside torch.cuda.CUDAGraph of the same kernels in one torch process), then
#             bench-graph-process.py's modes and CUDA_MODULE_LOADING=EAGER
# A step that would start with fewer seconds left than it needs is skipped and
# says so. Run from the repository root (of the archived branch).
set -uo pipefail
budget=${1:?budget seconds}; shift
start=$(date +%s)
deadline=$((start + budget))
OUT=${OUT:-/tmp/session-out}
mkdir -p "$OUT" /tmp/session-logs
log=$OUT/session.log
exec > >(tee -a "$log") 2>&1
export PYTHONUNBUFFERED=1
left () { echo $((deadline - $(date +%s))); }
say () { echo "== [$(date -u +%H:%M:%S) +$(( $(date +%s) - start ))s, $(left)s left] $*"; }

say "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv,noheader || true
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))' || true
git_rev=$(cat .device-rev 2>/dev/null || echo unknown)
say "source: $git_rev"

data_pid=
for s in "$@"; do
  if [ "$s" = data ]; then
    say "data: make-gpu-data.py in the background"
    (python3 tools/device/make-gpu-data.py /tmp/gpu-data >/tmp/session-logs/gpu-data.log 2>&1; echo "rc=$?" >>/tmp/session-logs/gpu-data.log) &
    data_pid=$!
  fi
done
wait_data () {
  if [ -n "$data_pid" ]; then
    say "waiting for make-gpu-data.py"
    timeout $(( $(left) > 30 ? $(left) - 30 : 1 )) tail --pid="$data_pid" -f /dev/null
    cat /tmp/session-logs/gpu-data.log | grep -v "^ " | tail -30
    data_pid=
  fi
}

need () { # need SECONDS NAME
  if [ "$(left)" -lt "$1" ]; then say "SKIPPED $2 (needs ${1}s)"; return 1; fi
  say "start $2"; return 0
}

source tools/device/env.sh >/dev/null
set +e +u
ld=$WICK_RUNTIME_LD
B=_build-device
targets="backend/libwick.so.1.0.0 app/cli/wick-trace tests/cuda/stages/test-stage-capture
 tests/cuda/weights/test-weight-store-cuda tests/bench/weights/bench-weight-store
 tests/bench/stages/bench-stage-replay tests/bench/stages/libstage-replay-bench.so
 tests/bench/core/bench-ring-hot-path"

for s in "$@"; do
  case $s in
    data) ;;
    build)
      need 60 build || continue
      WICK_DEVICE_TARGETS="$targets" timeout $(( $(left) - 20 )) tools/device/build.sh >/tmp/session-logs/build.log 2>&1
      echo "build rc=$?"; grep -E "^==|FAILED|error:" /tmp/session-logs/build.log | head -30
      ;;
    suite)
      wait_data
      need 60 suite || continue
      timeout $(( $(left) - 20 )) $WICK_MESON test -C $B --no-rebuild --print-errorlogs \
        --wrapper "env LD_LIBRARY_PATH=$ld" stage-capture weight-store-cuda >/tmp/session-logs/suite.log 2>&1
      echo "suite rc=$?"; grep -E "^ok|^not ok|# SKIP|^[0-9]+/[0-9]+ |Ok:|Fail:|Skipped:|Timeout:" /tmp/session-logs/suite.log $B/meson-logs/testlog*.txt | sed 's/^[^:]*://' | sort -u | head -80
      cp $B/meson-logs/testlog*.txt /tmp/session-logs/ 2>/dev/null
      ;;
    python)
      wait_data
      need 90 python || continue
      OUT=/tmp/session-logs WICK_DEVICE_TARGETS="backend/libwick.so.1.0.0 app/cli/wick-trace" \
        timeout $(( $(left) - 20 )) tools/device/run-python-cuda.sh torch_stage torch_control torch_cuda 2>&1 | tee /tmp/session-logs/remote-gpu.log
      OUT=/tmp/session-logs timeout $(( $(left) - 10 )) tools/device/run-python-cuda.sh torch_weights torch_train 2>&1 | tail -20
      cp /tmp/py-*.log /tmp/session-logs/ 2>/dev/null
      ;;
    weights1|weights2)
      wait_data
      for round in ${s#weights}; do
        for mode in cpu gpu; do
          need 45 "weights round $round digests=$mode" || continue
          if [ $mode = gpu ]; then unset WICK_WEIGHT_GPU_DIGESTS; else export WICK_WEIGHT_GPU_DIGESTS=0; fi
          LD_LIBRARY_PATH=$ld timeout $(( $(left) - 10 )) $B/tests/bench/weights/bench-weight-store \
            --gib 2 --params 8 --reps 5 --script tests/bench/weights/bench-safetensors-load.py \
            >/tmp/session-logs/weights-$round-$mode.log 2>&1
          echo "weights $round $mode rc=$?"; cat /tmp/session-logs/weights-$round-$mode.log
        done
      done
      unset WICK_WEIGHT_GPU_DIGESTS
      ;;
    weightsdiag)
      # the restore's gaps (bench-weight-store's diagnostics: fresh mappings,
      # the GPU digest's own speed, the disk pipeline with and without digests)
      wait_data
      need 60 weightsdiag || continue
      WICK_BENCH_WEIGHT_DIAGNOSTICS=1 LD_LIBRARY_PATH=$ld timeout $(( $(left) - 10 )) $B/tests/bench/weights/bench-weight-store \
        --gib 2 --params 8 --reps 5 --script tests/bench/weights/bench-safetensors-load.py \
        >/tmp/session-logs/weights-diag.log 2>&1
      echo "weightsdiag rc=$?"; cat /tmp/session-logs/weights-diag.log
      ;;
    weightsx3)
      # the default (GPU digests, one copy stream) in 3 processes
      wait_data
      for round in 1 2 3; do
        need 40 "weights default ($round)" || continue
        LD_LIBRARY_PATH=$ld timeout $(( $(left) - 10 )) $B/tests/bench/weights/bench-weight-store \
          --gib 2 --params 8 --reps 5 --script tests/bench/weights/bench-safetensors-load.py \
          >/tmp/session-logs/weights-default-$round.log 2>&1
        echo "weights default $round rc=$?"; cat /tmp/session-logs/weights-default-$round.log
      done
      ;;
    weightsdisk)
      # the default in 3 processes, the disk tier's reader threads alternated
      # (WICK_WEIGHT_DISK_READERS 16, 8, 16): RAM-tier figures from all three,
      # the disk restore against torch's load for both reader counts
      wait_data
      for run in 1:16 2:8 3:16; do
        readers=${run#*:}
        need 40 "weights readers=$readers" || continue
        WICK_BENCH_WEIGHT_CONTENDERS=0 WICK_WEIGHT_DISK_READERS=$readers LD_LIBRARY_PATH=$ld \
          timeout $(( $(left) - 10 )) $B/tests/bench/weights/bench-weight-store \
          --gib 2 --params 8 --reps 5 --script tests/bench/weights/bench-safetensors-load.py \
          >/tmp/session-logs/weights-readers-${run%%:*}.log 2>&1
        echo "weights readers=$readers rc=$?"; cat /tmp/session-logs/weights-readers-${run%%:*}.log
      done
      ;;
    weightsc)
      # the RAM tier's contenders (bench-weight-store's run_contenders and run_pinning:
      # early release against the old order, huge-page registered spills, spills
      # prepared ahead), 2 processes
      wait_data
      for round in 1 2; do
        need 60 "weights contenders ($round)" || continue
        LD_LIBRARY_PATH=$ld timeout $(( $(left) - 10 )) $B/tests/bench/weights/bench-weight-store \
          --gib 2 --params 8 --reps 7 --script tests/bench/weights/bench-safetensors-load.py \
          >/tmp/session-logs/weights-contenders-$round.log 2>&1
        echo "weights contenders $round rc=$?"
        grep -E "^RESULT|^contenders|^spill|baseline|evict: copies|evict, RAM tier  |restore, RAM tier  |restore, disk tier  |torch safetensors|fresh VMM|die|bench-weight-store:" \
          /tmp/session-logs/weights-contenders-$round.log
      done
      ;;
    py:*)
      need 40 "$s" || continue
      OUT=/tmp/session-logs WICK_DEVICE_TARGETS="backend/libwick.so.1.0.0 app/cli/wick-trace" \
        timeout $(( $(left) - 10 )) tools/device/run-python-cuda.sh ${s#py:} 2>&1 | tail -8
      ;;
    readers)
      # the disk tier's reader threads, 8 (the default) against 16, alternating
      for round in 1 2; do
        for n in 8 16; do
          need 35 "weights readers=$n ($round)" || continue
          WICK_WEIGHT_DISK_READERS=$n LD_LIBRARY_PATH=$ld timeout $(( $(left) - 10 )) $B/tests/bench/weights/bench-weight-store \
            --gib 2 --params 8 --reps 5 --script tests/bench/weights/bench-safetensors-load.py \
            >/tmp/session-logs/weights-readers$n-$round.log 2>&1
          echo "readers $n $round rc=$?"; cat /tmp/session-logs/weights-readers$n-$round.log
        done
      done
      ;;
    gptprofile)
      need 40 gptprofile || continue
      # the package of this tree, built as the gpt step builds it
      OUT=/tmp/session-logs WICK_DEVICE_BUILD_ONLY=1 WICK_DEVICE_TARGETS="backend/libwick.so.1.0.0 app/cli/wick-trace" \
        tools/device/run-python-cuda.sh >/dev/null 2>&1
      PYTHONPATH=$PWD/$B/python-abi3 timeout $(( $(left) - 10 )) python3 tests/bench/python/bench-torch-gpt.py --rounds 3 --steps 10 \
        --no-profiler --profile /tmp/gpt.prof --profile-mode ${WICK_GPT_PROFILE_MODE:-instrument} \
        >/tmp/session-logs/gpt-profile.log 2>&1
      echo "gptprofile rc=$?"; grep -E "RESULT|tottime|wick|weakref" /tmp/session-logs/gpt-profile.log | head -30
      ;;
    stagepool)
      # the 128-kernel gap against torch: the same benchmark with its buffers in one large
      # allocation, and after a 1 GiB allocation written first (bench-stage-replay.c)
      for env in "X=1" "WICK_BENCH_POOL=1" "WICK_BENCH_POOL=1 WICK_BENCH_PREALLOC_MIB=1024"; do
        need 25 "stage replay with $env" || continue
        env $env LD_LIBRARY_PATH=$ld timeout 60 $B/tests/bench/stages/bench-stage-replay \
          >/tmp/session-logs/stagepool-$(echo $env | tr -c 'A-Za-z0-9=' _).log 2>&1
        echo "$env rc=$?"; grep -E "^BENCH|RESULT kernels=(128|512) threads=128|VARIANT kernels=128 variant=default" \
          /tmp/session-logs/stagepool-$(echo $env | tr -c 'A-Za-z0-9=' _).log
      done
      ;;
    stagesproc)
      # does eager module loading make the 128-kernel graph fast? one process a line is not
      # enough (process-to-process variation): 3 lazy and 3 eager processes alternated
      wait_data
      need 100 stagesproc || continue
      sp=/tmp/session-logs/stagesproc.log; : >$sp
      for round in 1 2 3; do
        for mode in LAZY EAGER; do
          [ "$(left)" -lt 40 ] && { say "stagesproc: stopped before $mode $round"; break 2; }
          echo "PROCESS loading=$mode round=$round" >>$sp
          CUDA_MODULE_LOADING=$mode WICK_BENCH_CONTENDERS=only WICK_BENCH_CONTENDER_NAMES=bare,wick,torch-like \
            LD_LIBRARY_PATH=$ld timeout 40 $B/tests/bench/stages/bench-stage-replay >>$sp 2>&1
          echo "PROCESS rc=$?" >>$sp
        done
      done
      for mode in LAZY EAGER; do
        [ "$(left)" -lt 30 ] && { say "stagesproc: torch $mode skipped"; continue; }
        echo "PROCESS loading=$mode round=torch" >>$sp
        CUDA_MODULE_LOADING=$mode timeout 40 python3 tests/bench/stages/bench-torch-graph.py >>$sp 2>&1
        echo "PROCESS rc=$?" >>$sp
      done
      echo "stagesproc: $(grep -c '^PROCESS loading' $sp) processes"
      grep -E "^BENCH|Error|error" $sp | sort | uniq -c | head -8
      python3 tools/device/stages-processes.py $sp
      ;;
    stages)
      wait_data
      need 60 stages || continue
      OUT=/tmp/session-logs timeout $(( $(left) - 10 )) tools/device/bench-stages.sh >/tmp/session-logs/stages-full.log 2>&1
      echo "stages rc=$?"; grep -E "^\||RESULT kernels|GAP|error|certif" /tmp/session-logs/stages-full.log | head -60
      grep -E "^CONTENDER" /tmp/session-logs/stages-full.log
      ;;
    hotpath)
      wait_data
      for core in 3 5; do
        need 25 "hotpath core $core (static + dlopen)" || continue
        WICK_LIBWICK=$PWD/$B/backend/libwick.so.1.0.0 LD_LIBRARY_PATH=$ld timeout 60 taskset -c $core \
          $B/tests/bench/core/bench-ring-hot-path 31 300000 1 >/tmp/session-logs/hotpath-$core-dlopen.log 2>&1
        echo "rc=$?"; cat /tmp/session-logs/hotpath-$core-dlopen.log | head -40
        need 25 "hotpath core $core (linked at start)" || continue
        WICK_LIBWICK=$PWD/$B/backend/libwick.so.1.0.0 LD_PRELOAD=$PWD/$B/backend/libwick.so.1 LD_LIBRARY_PATH=$ld timeout 60 taskset -c $core \
          $B/tests/bench/core/bench-ring-hot-path 31 300000 1 >/tmp/session-logs/hotpath-$core-preload.log 2>&1
        echo "rc=$?"; cat /tmp/session-logs/hotpath-$core-preload.log | head -40
      done
      # one line a (core, link mode, variant): session calls and the thread handle's
      # inline calls (wick/wick-thread-handle.h), each against the floor of its process
      say "hotpath RESULT lines (static appears in both processes of a core)"
      grep -H "^RESULT" /tmp/session-logs/hotpath-*.log | sed 's|/tmp/session-logs/hotpath-||; s|\.log:| |'
      ;;
    same)
      # Wick's certified stage beside torch.cuda.CUDAGraph and a bare graph of the same
      # library's kernels, in one torch process (bench-graph-probe.py's SAME cells only)
      need 40 same || continue
      PROBE_ONLY_SAME=1 STAGE_REPLAY_LIB=$PWD/$B/tests/bench/stages/libstage-replay-bench.so \
        timeout $(( $(left) - 10 )) python3 tests/bench/stages/bench-graph-probe.py >/tmp/session-logs/same.log 2>&1
      echo "same rc=$?"; grep -E "^SAME|Error|error" /tmp/session-logs/same.log | head -20
      ;;
    hotpathab)
      # bench-ring-hot-path of ../src-before (a tree
      # packed beside this one) against this tree, alternating on one machine,
      # 2 rounds x cores 3 and 5 x (static + dlopen, linked at start), 0.2 s drain
      need 60 "hotpath before/after" || continue
      before=${WICK_HOTPATH_BEFORE:-$PWD/../src-before}
      if [ ! -d "$before" ]; then say "no ../src-before: skipped"; continue; fi
      (cd "$before" && mkdir -p .device && ln -sfn "$PWD/../debs" .device/debs \
        && WICK_DEVICE_TARGETS="backend/libwick.so.1.0.0 tests/bench/core/bench-ring-hot-path" \
           timeout 120 bash tools/device/build.sh >/tmp/session-logs/build-before.log 2>&1)
      echo "before build rc=$? ($(cat "$before/.device-rev" 2>/dev/null))"
      for r in 1 2; do
        for t in before after; do
          if [ $t = before ]; then BB=$before/_build-device; else BB=$PWD/$B; fi
          for core in 3 5; do
            need 20 "hotpath $t $r core $core" || continue
            WICK_LIBWICK=$BB/backend/libwick.so.1.0.0 LD_LIBRARY_PATH=$ld timeout 60 taskset -c $core \
              $BB/tests/bench/core/bench-ring-hot-path 31 300000 0.2 >/tmp/session-logs/hp-$t-$r-$core-dlopen.log 2>&1
            WICK_LIBWICK=$BB/backend/libwick.so.1.0.0 LD_PRELOAD=$BB/backend/libwick.so.1 LD_LIBRARY_PATH=$ld timeout 60 \
              taskset -c $core $BB/tests/bench/core/bench-ring-hot-path 31 300000 0.2 >/tmp/session-logs/hp-$t-$r-$core-preload.log 2>&1
          done
        done
      done
      grep -H "x floor" /tmp/session-logs/hp-*.log | grep -E "floor \(|wick ring  |libwick.so|thread handle" | sed 's|/tmp/session-logs/||'
      grep -H "^RESULT" /tmp/session-logs/hp-*.log | sed 's|/tmp/session-logs/||'
      ;;
    gpt*)
      wait_data
      OUT=/tmp/session-logs WICK_DEVICE_BUILD_ONLY=1 WICK_DEVICE_TARGETS="backend/libwick.so.1.0.0 app/cli/wick-trace" \
        tools/device/run-python-cuda.sh >/dev/null 2>&1
      variants=new
      if [ -d .device-oldwick/wick ]; then
        if [ -f .device-oldwick/_wick.c ]; then
          # the older tree's extension too, built as run-python-cuda.sh builds this one's
          gcc -shared -fPIC -O2 -std=gnu17 -fvisibility=hidden -DPy_LIMITED_API=0x030B0000 -D_GNU_SOURCE \
            -I/tmp/wick-py311/usr/include/python3.11 -I/tmp/wick-py311/usr/include -I$B -I. -Ibackend -I$B/backend \
            .device-oldwick/_wick.c -L$B/backend -lwick -Wl,-rpath,"$PWD/$B/backend" \
            -o .device-oldwick/wick/_wick.abi3.so && variants="old new"
        else
          cp $B/python-abi3/wick/_wick.abi3.so .device-oldwick/wick/ && variants="old new"
        fi
      fi
      for pair in $(seq 1 ${s#gpt}); do
        for v in $variants; do
          need 75 "gpt $v ($pair)" || continue
          if [ $v = new ]; then pp=$PWD/$B/python-abi3; else pp=$PWD/.device-oldwick; fi
          PYTHONPATH=$pp timeout $(( $(left) - 10 )) python3 tests/bench/python/bench-torch-gpt.py ${WICK_GPT_ARGS:-} \
            >/tmp/session-logs/gpt-$v-$pair.log 2>&1
          echo "gpt $v $pair rc=$?"; grep -E "^GPT|RESULT|Error|error" /tmp/session-logs/gpt-$v-$pair.log | head -12
        done
      done
      ;;
    probe)
      wait_data
      need 50 probe || continue
      libs=
      for kind in sass ptx; do
        codes="-gencode=arch=compute_90,code=compute_90"
        [ $kind = sass ] && codes="-gencode=arch=compute_90,code=sm_90 $codes"
        nvcc -O3 -std=c++17 -Xcompiler -fPIC -shared -cudart static $codes -Ibackend -Itests/cuda/stages \
          tests/cuda/stages/stage-test-kernels.cu -o /tmp/libstk-$kind.so && libs=$libs:/tmp/libstk-$kind.so
      done
      PROBE_LIBS=$libs STAGE_REPLAY_LIB=$PWD/$B/tests/bench/stages/libstage-replay-bench.so \
        timeout $(( $(left) - 10 )) python3 tests/bench/stages/bench-graph-probe.py >/tmp/session-logs/probe.log 2>&1
      echo "probe rc=$?"; grep -vE "^\s+File|^\s+\^|Deprecation|ExternalStream|fma_chain" /tmp/session-logs/probe.log | head -90
      # which part of a torch process makes the 128-kernel graph faster
      for mode in ctypes torch-imported torch-after; do
        PROBE_LIBS=$libs timeout 60 python3 tests/bench/stages/bench-graph-process.py $mode 2>&1 | tee -a /tmp/session-logs/process.log
      done
      CUDA_MODULE_LOADING=EAGER PROBE_LIBS=$libs timeout 60 python3 tests/bench/stages/bench-graph-process.py ctypes 2>&1 \
        | sed 's/mode=ctypes/mode=ctypes-eager-loading/' | tee -a /tmp/session-logs/process.log
      CUDA_MODULE_LOADING=EAGER LD_LIBRARY_PATH=$ld timeout 60 $B/tests/bench/stages/bench-stage-replay 2>&1 | grep "^GAP.*gap_us=0 " \
        | sed 's/process=c/process=c-eager-loading/' | tee -a /tmp/session-logs/process.log
      ;;
    *) say "unknown step $s" ;;
  esac
done
wait_data
say "packing"
if [ -d /tmp/gpu-data ]; then
  tar -C /tmp -cf - gpu-data | xz -T0 -6 >/tmp/gpu-data.tar.xz
  ls -l /tmp/gpu-data.tar.xz
  split -b 15M -d /tmp/gpu-data.tar.xz "$OUT/gpu-data.tar.xz."
fi
tar -C /tmp -czf "$OUT/logs.tar.gz" session-logs
ls -l "$OUT"
say "done"

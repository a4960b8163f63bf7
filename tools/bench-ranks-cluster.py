#!/usr/bin/python3
"""wick.trace.ranks over a generated job, here and on a dask LocalCluster of 2
worker processes, checked against its truth.json:
  PYTHONPATH=BUILD/python WICK_TRACE=BUILD/app/cli/wick-trace \\
    tools/bench-ranks-cluster.py DIR     (DIR from tools/make-rank-traces.py)"""
import json, os, sys, time
DIR = sys.argv[1] if len(sys.argv) > 1 else "."
import wick.trace
from dask.distributed import Client, LocalCluster
def main():
    truth = json.load(open(os.path.join(DIR, "truth.json")))
    paths = [os.path.join(DIR, r["file"]) for r in truth["ranks"]]
    t = time.perf_counter(); local = wick.trace.ranks(paths); tl = time.perf_counter() - t; print("local", tl, flush=True)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, Client(c) as cl:
        t = time.perf_counter(); remote = wick.trace.ranks(paths, client=cl); tr = time.perf_counter() - t
    err = max(abs(r["offset_ns"] - x["expected_offset_ns"]) for r, x in zip(remote["ranks"], truth["ranks"]))
    tc = {(c["group"], c["seq"]): c for c in truth["collectives"]}
    bad = sum(1 for c in remote["collectives"] if tc[(c["group"], c["seq"])]["last_rank"] != c["last_rank"])
    print(f"1000 ranks {sum(os.path.getsize(p) for p in paths)/1e6:.0f} MB: local {tl:.1f} s, LocalCluster(2 workers) {tr:.1f} s, same job {remote == local}, max offset error {err} ns, straggler first {remote['stragglers'][0]['rank']} (planted {truth['straggler']}), collectives {len(remote['collectives'])}/{len(tc)}, last rank wrong {bad}, load {os.getloadavg()[0]:.1f}")
    
if __name__ == "__main__":
    main()

"""wick.trace.ranks: a generated 8-rank job (tools/make-rank-traces.py, known
offsets and straggler) reduced here and on a dask.distributed LocalCluster of
three worker processes; both give the same job, and it recovers the truth."""
import json
import os
import subprocess
import sys
import tempfile

import wicktest


def main():
    wicktest.require_wick_trace()
    os.environ["WICK_TRACE"] = wicktest.WICK_TRACE
    import wick.trace

    with tempfile.TemporaryDirectory(prefix="wick-ranks-py-") as tmp:
        subprocess.run([sys.executable, os.path.join(wicktest.SOURCE, "tools", "make-rank-traces.py"),
                        tmp, "--outlier", "--seed", "5"], check=True, timeout=120)
        with open(os.path.join(tmp, "truth.json")) as f:
            truth = json.load(f)
        paths = [os.path.join(tmp, r["file"]) for r in truth["ranks"]]

        local = wick.trace.ranks(paths)
        check(local, truth)

        # errors name the file
        bad = os.path.join(tmp, "rank-99.json")
        with open(bad, "w") as f:
            f.write('{"traceEvents": [{"ph": "X",}]}')
        try:
            wick.trace.reduce_rank(bad)
            raise AssertionError("a broken file reduced")
        except wick.trace.Error as e:
            assert "rank-99.json" in str(e), e

        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:
            wicktest.skip("dask.distributed is not importable (%s); install python3-distributed" % e)
        with LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 3
            remote = wick.trace.ranks(paths, client=client)
            # the partials came from more than one worker process
            pids = set(client.run(os.getpid).values())
            assert len(pids) == 3, pids
        assert remote == local, "the cluster's job differs from the local one"
        check(remote, truth)
    print("ok: 8 ranks, local and on a 3-worker LocalCluster")


def check(job, truth):
    assert sorted(job) == ["collectives", "ranks", "stragglers"], sorted(job)
    assert [r["rank"] for r in job["ranks"]] == [r["rank"] for r in truth["ranks"]]
    for r, t in zip(job["ranks"], truth["ranks"]):
        assert abs(r["offset_ns"] - t["expected_offset_ns"]) <= 50_000, (r, t)
    assert job["stragglers"][0]["rank"] == truth["straggler"], job["stragglers"][:3]
    by_key = {(c["group"], c["seq"]): c for c in job["collectives"]}
    assert len(by_key) == len(truth["collectives"])
    for t in truth["collectives"]:
        c = by_key[(t["group"], t["seq"])]
        assert c["ranks"] == t["ranks"] and c["last_rank"] == t["last_rank"], (c, t)


if __name__ == "__main__":
    main()

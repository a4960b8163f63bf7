#!/usr/bin/env python3
"""Writes a pair of synthetic candle-graph training runs for `wick-trace compare`:
   tools/make-compare-pair.py A.jsonl B.jsonl SEED [SLOW_OP]
B is the same workload with another seed, and SLOW_OP (e.g. relu) made 30% slower
when given. 20 steps of forward (matmul, relu, matmul, softmax) and backward, with
10% per-op and 2% per-step log-normal noise and activation memory per op."""
import json, math, random, sys
def run(seed, steps, slow=None, factor=1.3, precision="bf16"):
    rnd = random.Random(seed)
    meta = {"kind":"meta","schema":"candle-graph/trace/10","run_id":f"run-{seed}","correlation_id":"c","entrypoint":"train_mlp","phase":"infer","timestamp":"2026-12-01T00:00:00Z","capture_step":1,"warmup_steps":0,"device":"cpu","timing_mode":"host","capture_contract":{"measurement_scope":"profiled_work","operations":"partial","logical_memory":"partial","physical_memory":"none","device_timing":"none"},"comparison_identity":{"workload_id":"mlp","model_id":"m","config_id":"c","data_id":"d","seed_policy":"fixed","physical_batch":64,"accumulation_steps":1,"precision":precision,"device_state":"idle"},"tags":{}}
    out=[json.dumps(meta)]
    ids=[1]; t=[1000]
    out.append(json.dumps({"kind":"span_start","id":"s1","name":"train_mlp","start_ns":0,"span_kind":"function","measured":True}))
    def start(name,parent,kind="function"):
        ids[0]+=1; i=ids[0]
        out.append(json.dumps({"kind":"span_start","id":f"s{i}","parent_id":f"s{parent}","name":name,"start_ns":t[0],"span_kind":kind}))
        return i,t[0]
    def end(i,s0): out.append(json.dumps({"kind":"span_end","id":f"s{i}","duration_ns":t[0]-s0}))
    live=0; st=[0]
    def op(name,parent,base,sf):
        i,s0=start(name,parent,"op")
        f = factor if name==slow else 1
        d=int(base*f*sf*math.exp(0.1*rnd.gauss(0,1)))
        st[0]+=1
        out.append(json.dumps({"kind":"memory","timestamp_ns":t[0],"storage_id":f"st{st[0]}","tensor_id":f"t{st[0]}","span_id":f"s{i}","device":"cpu","bytes":1<<20,"shape":[262144],"dtype":"f32","action":"alloc","category":"activation"}))
        t[0]+=d
        out.append(json.dumps({"kind":"op","span_id":f"s{i}","op_name":name,"shape":[64],"dtype":"f32","device":"cpu","duration_ns":d,"timestamp_ns":s0,"input_dense_bytes":256}))
        out.append(json.dumps({"kind":"memory","timestamp_ns":t[0],"storage_id":f"st{st[0]}","tensor_id":f"t{st[0]}","span_id":f"s{i}","device":"cpu","bytes":1<<20,"shape":[262144],"dtype":"f32","action":"free","category":"activation"}))
        t[0]+=100; end(i,s0)
    for k in range(steps):
        sf=math.exp(0.02*rnd.gauss(0,1))
        s,s0=start("train_step",1); t[0]+=200
        f,f0=start("forward",s)
        for n,b in (("matmul",40000),("relu",8000),("matmul",40000),("softmax",12000)): op(n,f,b,sf)
        end(f,f0)
        b_,b0=start("backward",s)
        for n,b in (("matmul_grad",80000),("relu_grad",9000),("matmul_grad",80000)): op(n,b_,b,sf)
        end(b_,b0); t[0]+=300; end(s,s0)
    out.append(json.dumps({"kind":"span_end","id":"s1","duration_ns":t[0]}))
    out.append(json.dumps({"kind":"terminal","outcome":"complete","timestamp_ns":t[0]}))
    return "\n".join(out)+"\n"
open(sys.argv[1],"w").write(run(int(sys.argv[3]),20))
open(sys.argv[2],"w").write(run(int(sys.argv[3])+1,20,slow=sys.argv[4] if len(sys.argv)>4 else None))

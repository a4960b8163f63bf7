#!/usr/bin/env bash
# gpu-demo-check.sh BUILD_DIR OUT_DIR — on a machine with a GPU (run through the
# device tool), the issue-6 check end to end through the control socket:
# wick-demo runs with its CUDA stages; "capture denoise" must be accepted with
# its figures, "capture denoise-rng" refused by the parity gate, and both
# certificates must be in the demo's own trace. Speaks the control protocol
# from Python (docs/protocol.md) so it needs neither GTK nor json-glib there;
# uses wick-trace when it can run. Writes its replies and the trace to OUT_DIR.
set -uo pipefail
build=$1
out=$2
export XDG_RUNTIME_DIR
XDG_RUNTIME_DIR=$(mktemp -d)
chmod 700 "$XDG_RUNTIME_DIR"
nvidia-smi -L || true

"$build/backend/demo/wick-demo" --quiet --rate 20 --trace "$out/demo-gpu.jsonl" &
demo=$!

python3 - "$XDG_RUNTIME_DIR/wick" "$demo" "$out" <<'PY'
import glob, json, os, socket, struct, sys, time
directory, pid, out = sys.argv[1], sys.argv[2], sys.argv[3]

def answering():
    """The demo's socket once it accepts a connection (no fixed sleep)."""
    for candidate in glob.glob(f"{directory}/{pid}-*.sock"):
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(candidate)
            return candidate
        except OSError:
            pass
    return None

deadline = time.monotonic() + 120
path = answering()
while path is None:
    if time.monotonic() > deadline or not os.path.exists(f"/proc/{pid}"):
        sys.exit(f"wick-demo (pid {pid}) opened no control socket in {directory} within 120 s")
    time.sleep(0.05)
    path = answering()

def request(command, **members):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    body = json.dumps({"v": 1, "command": command, **members}).encode()
    s.sendall(struct.pack("<I", len(body)) + body)
    n = struct.unpack("<I", s.recv(4, socket.MSG_WAITALL))[0]
    reply = b""
    while len(reply) < n:
        reply += s.recv(n - len(reply))
    s.close()
    return json.loads(reply)

results = {"list": request("list"),
           "capture denoise": request("capture", stage="denoise"),
           "capture denoise-rng": request("capture", stage="denoise-rng"),
           "list after": request("list")}
with open(f"{out}/control-replies.json", "w") as f:
    json.dump(results, f, indent=1)
for name, reply in results.items():
    print(name, json.dumps(reply)[:600])
PY
status=$?
# the certificates are in the demo's ring once the capture replies came;
# SIGINT finishes its trace with them
kill -INT "$demo"
wait "$demo"
echo "demo exit status $?"
[ "$status" = 0 ] || exit "$status"
grep -c wick_stage_certification "$out/demo-gpu.jsonl"
grep wick_stage_certification "$out/demo-gpu.jsonl" | cut -c1-400
"$build/app/cli/wick-trace" check "$out/demo-gpu.jsonl" 2>&1 | head -5 || true

#!/usr/bin/env bash
# Soak test of belt serve (not part of make check): N requests (default
# 2000) from C concurrent clients (default 16) against --parallel P slots
# (default 4): chat and completions, streamed and not, sampled and greedy,
# stop strings, json_schema, bad requests, and clients that leave
# mid-stream. Every answer must be what its request asks (200 with text
# and usage, or the 400 a bad one gets); at the end every slot is idle,
# the server's resident memory is within 5% of what it was after the
# first 100 requests, and SIGTERM ends it with status 0.
#   tests/serve-soak.sh [N [C [P]]]   (BELT_BIN, BELT_SHARED_DIR as for make check;
#                                      MODEL=... for another model)
set -u
build="${BELT_BUILDDIR:-$(pwd)}"
BELT_BIN="${BELT_BIN:-$build/belt}"
BELT_SHARED_DIR="${BELT_SHARED_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared}"
srcdir="$(cd "$(dirname "$0")" && pwd)"
model="${MODEL:-$BELT_SHARED_DIR/models/stories260K.f32.gguf}"
n="${1:-2000}" clients="${2:-16}" parallel="${3:-4}"
me=serve-soak
. "$srcdir/serve-node.sh"
serve_start --parallel "$parallel" -c 1024 --max-connections $((clients * 2))
echo "serve-soak: $n requests, $clients clients, $parallel slots, port $port, pid $pid"
python3 - "http://127.0.0.1:$port" "$n" "$clients" "$pid" <<'EOF'
import http.client, json, random, sys, threading, time
base, n, clients, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
host, port = base.split("//")[1].split(":")
msgs = [{"role": "user", "content": "Tell me a story about a dog."}]
schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}},
          "required": ["name"], "additionalProperties": False}

def rss_kib():
    for line in open("/proc/%s/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

def one(i, rng):
    kind = rng.choice(["chat", "completion", "bad", "leave", "schema"])
    stream = rng.random() < 0.5
    body = {"max_tokens": rng.randint(1, 200), "temperature": rng.choice([0, 0.8]),
            "seed": i, "stream": stream}
    path = "/v1/chat/completions"
    if kind in ("completion", "leave"):
        path, body["prompt"] = "/v1/completions", "Once upon a time"
        if kind == "leave":
            body.update(stream=True, max_tokens=800)
    else:
        body["messages"] = msgs
    if rng.random() < 0.3:
        body["stop"] = [rng.choice(["the", ".", "\n", "was a"])]
    if kind == "bad":
        body["messages"] = [{"role": "robot", "content": 5}]
    if kind == "schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    c = http.client.HTTPConnection(host, int(port), timeout=120)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    if kind == "bad":
        j = json.loads(r.read())
        assert r.status == 400 and j["error"]["param"] == "messages", (r.status, j)
        return
    assert r.status == 200, (r.status, r.read()[:300])
    if kind == "leave":
        r.readline()
        c.sock.close()
        return
    if not stream:
        j = json.loads(r.read())
        u = j["usage"]
        assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"], j
        assert j["choices"][0]["finish_reason"] in ("stop", "length"), j
        return
    done = False
    for line in r:
        if line.startswith(b"data: [DONE]"):
            done = True
        elif line.startswith(b"data: "):
            j = json.loads(line[6:])
            assert "error" not in j, j
    assert done, "no [DONE]"

errors, count, done, lock = [], [0], [0], threading.Lock()
rss100 = []
def worker(k):
    rng = random.Random(k)
    while True:
        with lock:
            if count[0] >= n or errors:
                return
            count[0] += 1
            i = count[0]
        try:
            one(i, rng)
        except Exception as e:
            errors.append("request %d: %r" % (i, e))
        with lock:
            done[0] += 1
            if done[0] == 100:
                rss100.append(rss_kib())

t0 = time.time()
rss = []
threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
for t in threads:
    t.start()
while any(t.is_alive() for t in threads):
    time.sleep(1)
    rss.append(rss_kib())
    print("  %d requests, %.0f s, RSS %d KiB" % (count[0], time.time() - t0, rss[-1]), flush=True)
if errors:
    sys.exit("serve-soak: FAIL: " + errors[0])
time.sleep(0.5)
c = http.client.HTTPConnection(host, int(port), timeout=10)
c.request("GET", "/health")
h = json.loads(c.getresponse().read())
assert h["slots_busy"] == 0 and h["queued"] == 0, h
end = rss_kib()
if rss100 and end > 1.05 * rss100[0]:
    sys.exit("serve-soak: FAIL: memory grew from %d KiB after 100 requests to %d KiB" % (rss100[0], end))
print("serve-soak: %d requests in %.0f s, every one answered as asked, slots idle, RSS %d KiB at the end, %d after the first 100"
      % (n, time.time() - t0, end, rss100[0] if rss100 else 0))
EOF
rc=$?
[ $rc = 0 ] || { tail -20 "$tmp/log"; exit 1; }
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || { echo "serve-soak: belt serve exited $rc after SIGTERM"; tail -20 "$tmp/log"; exit 1; }
echo "serve-soak: passed"

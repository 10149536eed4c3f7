#!/usr/bin/env python3
"""Load on belt serve (tests/bench-serve.sh starts it): streaming
completions, first one client at a time, then CLIENTS at once. Prints the
single-client and the aggregate tokens/s and their ratio, and fails unless
every concurrent answer is complete (max_tokens tokens, or, greedy, as
many as the same prompt gave alone, where the model ended it) and,
greedy, equals what the same prompt gave alone. With --temperature T > 0 each
prompt has a seed of its own; the answers that equal their answer alone
are counted, not required (alone, the sampler's chain draws on the GPU;
in a shared pass the host draws from the row's logits)."""
import argparse
import http.client
import json
import sys
import threading
import time


def stream(port, prompt, tokens, key, temp=0.0, seed=0):
    """One streamed completion: (text, completion tokens, seconds)."""
    # cache_prompt false: every prompt runs whole, alone or not, so that
    # the answers compare (prefix reuse runs fewer rows, whose floats may
    # round otherwise)
    body = json.dumps({"prompt": prompt, "max_tokens": tokens, "temperature": temp,
                       "seed": seed, "cache_prompt": False,
                       "stream": True, "stream_options": {"include_usage": True}})
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", "/v1/completions", body, headers)
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError("status %d: %s" % (r.status, r.read()[:200]))
    text, used, done = [], None, False
    while True:
        line = r.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            done = True
            break
        ev = json.loads(data)
        if ev.get("usage"):
            used = ev["usage"]["completion_tokens"]
        for ch in ev.get("choices", []):
            text.append(ch.get("text", ""))
    c.close()
    if not done or used is None:
        raise RuntimeError("the stream ended without [DONE] or usage")
    return "".join(text), used, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--key", default="")
    ap.add_argument("--temperature", type=float, default=0.0)
    a = ap.parse_args()
    prompts = ["Request %d: once upon a time, in a town by the sea number %d," % (i, i * 7)
               for i in range(a.clients)]
    stream(a.port, prompts[0], 16, a.key)  # warm-up
    alone, alone_n, t_alone, n_alone = [], [], 0.0, 0
    for i, p in enumerate(prompts):
        text, n, s = stream(a.port, p, a.tokens, a.key, a.temperature, i)
        alone.append(text)
        alone_n.append(n)
        t_alone += s
        n_alone += n
    single = n_alone / t_alone
    print("bench-serve: one client at a time: %d requests, %d tokens, %.1f tokens/s"
          % (len(prompts), n_alone, single))
    bad = 0
    differ = 0
    best = 0.0
    for rnd in range(a.rounds):
        res = [None] * a.clients
        gate = threading.Barrier(a.clients)

        def client(i):
            gate.wait()
            try:
                res[i] = stream(a.port, prompts[i], a.tokens, a.key, a.temperature, i)
            except Exception as e:  # noqa: BLE001 (reported below)
                res[i] = e
        th = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        t0 = time.monotonic()
        for t in th:
            t.start()
        for t in th:
            t.join()
        wall = time.monotonic() - t0
        total = 0
        for i, r in enumerate(res):
            if isinstance(r, Exception):
                print("client %d: error: %s" % (i, r))
                bad += 1
                continue
            text, n, _ = r
            total += n
            # complete: as many tokens as asked, or, greedy, as the same
            # prompt gave alone (the model chose to end: its end token)
            if n != a.tokens and (a.temperature > 0 or n != alone_n[i]):
                print("client %d: %d tokens, expected %d (alone: %d)"
                      % (i, n, a.tokens, alone_n[i]))
                bad += 1
            elif text != alone[i] and a.temperature > 0:
                differ += 1
            elif text != alone[i]:
                k = next(j for j in range(min(len(text), len(alone[i])) + 1)
                         if j >= len(text) or j >= len(alone[i]) or text[j] != alone[i][j])
                print("client %d: the answer differs from the same prompt alone from "
                      "character %d: %r against %r" % (i, k, text[k:k + 30], alone[i][k:k + 30]))
                bad += 1
        agg = total / wall
        best = max(best, agg)
        print("bench-serve: %d clients at once (round %d): %d tokens in %.2f s, %.1f tokens/s, "
              "%.2fx one client" % (a.clients, rnd + 1, total, wall, agg, agg / single))
    print("bench-serve: best %.2fx one client; %d of %d answers wrong or incomplete"
          % (best / single, bad, a.clients * a.rounds))
    if a.temperature > 0:
        print("bench-serve: sampled at %g: %d of %d answers equal the same prompt's alone"
              % (a.temperature, a.clients * a.rounds - bad - differ, a.clients * a.rounds))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# belt serve driven with curl (doc/serve.md): stories260K on a free port,
# its chat template tests/serve-template.jinja (the model has none), an
# API key, two slots, a small body limit. Checked: the GET endpoints;
# chat and completions, streamed and not, with their usage; greedy
# answers equal to `belt run` on the same prompt (the chat's rendered by
# `belt template`), text and token count; stop strings, one across
# tokens; response_format json_schema validated by python3-jsonschema and
# json_object parsed; 400, 401, 404, 405 and 413 errors as OpenAI's error
# object; two streams at once and a third queued; a client that leaves
# mid-stream frees its slot; SIGTERM with a stream in flight ends it with
# an error event and exits 0. Needs BELT_BIN and BELT_SHARED_DIR (make
# check sets them), curl and python3 with jsonschema.
set -u
: "${BELT_BIN:?set by make check}" "${BELT_SHARED_DIR:?set by make check}"
srcdir="$(cd "$(dirname "$0")" && pwd)"
model="$BELT_SHARED_DIR/models/stories260K.f32.gguf"
template="$srcdir/serve-template.jinja"
key="test-key-$$"
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "serve.sh: $tool is needed"; exit 1; }
done
python3 -c 'import jsonschema' 2>/dev/null || { echo "serve.sh: python3-jsonschema is needed"; exit 1; }
# the interpreter itself, not a wrapper script that finds it (pyenv's
# takes most of a second each time)
py3="$(python3 -c 'import sys; print(sys.executable)')"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/belt-serve-XXXXXX")"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "serve.sh: FAIL: $*"
	echo "--- server log:"
	cat "$tmp/log"
	exit 1
}
ok() { echo "ok: $*"; }

# Start belt serve with the arguments; sets pid and base.
start() {
	"$BELT_BIN" serve -m "$model" --port 0 -t 2 "$@" 2>"$tmp/log" &
	pid=$!
	for _ in $(seq 100); do
		port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/log")"
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || fail "belt serve did not start"
		sleep 0.1
	done
	[ -n "$port" ] || fail "belt serve did not say its port"
	base="http://127.0.0.1:$port"
}

# post PATH BODY OUT [curl args]: the HTTP status on stdout, the body in OUT.
post() {
	local path="$1" body="$2" out="$3"
	shift 3
	curl -sS -o "$out" -w '%{http_code}' -H "Authorization: Bearer $key" \
		-H 'Content-Type: application/json' --data-binary "$body" "$@" "$base$path"
}

# py FILE EXPR: EXPR of the JSON in FILE (as d).
py() {
	"$py3" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# sse FILE: a stream's text, finish reason and usage as JSON
# {"text", "finish", "usage", "role", "done", "error"}, from its events.
sse() {
	"$py3" - "$1" <<'EOF'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
assert raw.endswith("\n\n"), "the stream does not end an event"
out = {"text": "", "finish": None, "usage": None, "role": None, "done": False, "error": None}
for ev in raw.split("\n\n")[:-1]:
    assert ev.startswith("data: "), "not a data event: %r" % ev
    data = ev[6:]
    assert not out["done"], "an event after [DONE]"
    if data == "[DONE]":
        out["done"] = True
        continue
    j = json.loads(data)
    if "error" in j:
        out["error"] = j["error"]
        continue
    if j.get("usage"):
        out["usage"] = j["usage"]
    for c in j["choices"]:
        d = c.get("delta", c)
        if d.get("role"):
            out["role"] = d["role"]
        out["text"] += d.get("content") or d.get("text") or ""
        if c["finish_reason"]:
            out["finish"] = c["finish_reason"]
print(json.dumps(out))
EOF
}

start --chat-template "$template" --api-key "$key" --parallel 2 -c 2048 --max-body 65536

# --- the GET endpoints; /health and / need no key
[ "$(curl -sS -o "$tmp/h" -w '%{http_code}' "$base/health")" = 200 ] || fail "/health"
[ "$(py "$tmp/h" 'd["status"], d["slots_idle"]')" = "('ok', 2)" ] || fail "/health: $(cat "$tmp/h")"
curl -sS "$base/" >"$tmp/page"
grep -q '<title>belt</title>' "$tmp/page" || fail "the page at /"
curl -sS -H "Authorization: Bearer $key" "$base/v1/models" >"$tmp/m"
[ "$(py "$tmp/m" 'd["object"], d["data"][0]["id"], d["data"][0]["object"]')" = \
	"('list', 'stories260K.f32.gguf', 'model')" ] || fail "/v1/models: $(cat "$tmp/m")"
ok "GET /health, /, /v1/models"

# --- greedy completion, as belt run gives it: text and token count
prompt="Once upon a time"
code="$(post /v1/completions "{\"model\": \"x\", \"prompt\": \"$prompt\", \"max_tokens\": 40, \"temperature\": 0}" "$tmp/c")"
[ "$code" = 200 ] || fail "completion: $code $(cat "$tmp/c")"
"$BELT_BIN" run -m "$model" -p "$prompt" -n 40 -c 2048 -t 2 >"$tmp/run.txt" 2>/dev/null || fail "belt run"
"$BELT_BIN" run -m "$model" -p "$prompt" -n 40 -c 2048 -t 2 --ids >"$tmp/run.ids" 2>/dev/null
"$BELT_BIN" tokenize -m "$model" -p "$prompt" >"$tmp/tok" || fail "belt tokenize"
"$py3" - "$tmp/c" "$tmp/run.txt" "$tmp/run.ids" "$tmp/tok" <<'EOF' || fail "completion against belt run"
import json, sys
d = json.load(open(sys.argv[1]))
run = open(sys.argv[2], encoding="utf-8").read()[:-1]  # belt run ends with a newline
ids = open(sys.argv[3]).read().split()
n_prompt = len(open(sys.argv[4]).read().splitlines())
c = d["choices"][0]
assert d["object"] == "text_completion" and d["id"].startswith("cmpl-"), d
assert isinstance(d["created"], int) and d["model"] == "stories260K.f32.gguf", d
assert c["text"] == run, (c["text"], run)
assert c["finish_reason"] == "length", c
u = d["usage"]
assert u == {"prompt_tokens": n_prompt, "completion_tokens": len(ids),
             "total_tokens": n_prompt + len(ids)}, (u, n_prompt, len(ids))
EOF
ok "greedy completion equals belt run (text, $(wc -w <"$tmp/run.ids") tokens, usage)"

# --- greedy chat, as belt run gives it on the prompt belt template renders
msgs='[{"role": "system", "content": "You tell stories."}, {"role": "user", "content": "Tell me about a dog."}]'
echo "$msgs" >"$tmp/msgs.json"
"$BELT_BIN" template --chat-template "$template" --messages "$tmp/msgs.json" >"$tmp/rendered" || fail "belt template"
"$BELT_BIN" run -m "$model" -f "$tmp/rendered" -n 30 -c 2048 -t 2 >"$tmp/chat-run.txt" 2>/dev/null || fail "belt run -f"
code="$(post /v1/chat/completions "{\"messages\": $msgs, \"max_tokens\": 30, \"temperature\": 0}" "$tmp/chat")"
[ "$code" = 200 ] || fail "chat: $code $(cat "$tmp/chat")"
"$py3" - "$tmp/chat" "$tmp/chat-run.txt" <<'EOF' || fail "chat against belt run"
import json, sys
d = json.load(open(sys.argv[1]))
run = open(sys.argv[2], encoding="utf-8").read()[:-1]
c = d["choices"][0]
assert d["object"] == "chat.completion" and d["id"].startswith("chatcmpl-"), d
assert c["message"] == {"role": "assistant", "content": run}, (c, run)
assert c["finish_reason"] == "length" and d["usage"]["completion_tokens"] == 30, d
EOF
ok "greedy chat equals belt run on the rendered prompt"

# --- streamed: the same text in chunks, the role first, [DONE] last
code="$(post /v1/chat/completions "{\"messages\": $msgs, \"max_tokens\": 30, \"temperature\": 0, \"stream\": true, \"stream_options\": {\"include_usage\": true}}" "$tmp/s1" -N)"
[ "$code" = 200 ] || fail "streamed chat: $code"
sse "$tmp/s1" >"$tmp/s1.json" || fail "streamed chat events: $(head -c 600 "$tmp/s1")"
[ "$(py "$tmp/s1.json" 'd["text"]')" = "$(py "$tmp/chat" 'd["choices"][0]["message"]["content"]')" ] || fail "streamed chat text"
[ "$(py "$tmp/s1.json" 'd["role"], d["finish"], d["done"], d["usage"]["completion_tokens"]')" = \
	"('assistant', 'length', True, 30)" ] || fail "streamed chat: $(cat "$tmp/s1.json")"
grep -q '"object":"chat.completion.chunk"' "$tmp/s1" || fail "chunk object"
code="$(post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 40, \"temperature\": 0, \"stream\": true}" "$tmp/s2" -N)"
sse "$tmp/s2" >"$tmp/s2.json" || fail "streamed completion events"
[ "$(py "$tmp/s2.json" 'd["text"]')" = "$(py "$tmp/c" 'd["choices"][0]["text"]')" ] || fail "streamed completion text"
[ "$(py "$tmp/s2.json" 'd["finish"], d["done"], d["usage"]')" = "('length', True, None)" ] || fail "streamed completion"
ok "streamed chat and completion: the same text, role, finish_reason, usage, [DONE]"

# --- sampled: a seed reproduces, another seed (most likely) differs
body="{\"prompt\": \"$prompt\", \"max_tokens\": 30, \"temperature\": 1.0, \"top_k\": 0, \"top_p\": 1, \"min_p\": 0"
post /v1/completions "$body, \"seed\": 7}" "$tmp/r1" >/dev/null
post /v1/completions "$body, \"seed\": 7}" "$tmp/r2" >/dev/null
post /v1/completions "$body, \"seed\": 8, \"presence_penalty\": 0.5, \"frequency_penalty\": 0.5, \"repeat_penalty\": 1.1}" "$tmp/r3" >/dev/null
[ "$(py "$tmp/r1" 'd["choices"][0]["text"]')" = "$(py "$tmp/r2" 'd["choices"][0]["text"]')" ] || fail "seed 7 twice"
[ "$(py "$tmp/r1" 'd["choices"][0]["text"]')" != "$(py "$tmp/r3" 'd["choices"][0]["text"]')" ] || fail "seeds 7 and 8 agree"
ok "sampled: a seed reproduces its answer"

# --- stop strings: the greedy text cut before the first match, which is
# not sent; one spans a token boundary (the space inside it begins a
# SentencePiece piece, so the characters before it end another)
full="$(py "$tmp/c" 'd["choices"][0]["text"]')"
stop="$("$py3" -c '
import sys
t = sys.argv[1]
i = t.index(" ", 8)
print(t[i - 3:i + 4])' "$full")"
expect="$("$py3" -c 'import sys; t, s = sys.argv[1:]; print(t[:t.index(s)])' "$full" "$stop")"
for stream in false true; do
	post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 40, \"temperature\": 0, \"stream\": $stream, \"stop\": [\"zzz\", \"$stop\"]}" "$tmp/stop" -N >/dev/null
	if [ $stream = true ]; then sse "$tmp/stop" >"$tmp/stop.json"; else
		py "$tmp/stop" 'json.dumps({"text": d["choices"][0]["text"], "finish": d["choices"][0]["finish_reason"]})' >"$tmp/stop.json"; fi
	[ "$(py "$tmp/stop.json" 'd["text"]')" = "$expect" ] || fail "stop '$stop' (stream $stream): $(cat "$tmp/stop.json"), expected '$expect'"
	[ "$(py "$tmp/stop.json" 'd["finish"]')" = stop ] || fail "stop: finish_reason"
	grep -qF "$stop" "$tmp/stop" && fail "the stop string was sent"
done
post /v1/chat/completions "{\"messages\": $msgs, \"max_tokens\": 30, \"temperature\": 0, \"stop\": \"$(py "$tmp/chat" 'd["choices"][0]["message"]["content"][5:9]')\"}" "$tmp/stop2" >/dev/null
[ "$(py "$tmp/stop2" 'd["choices"][0]["message"]["content"], d["choices"][0]["finish_reason"]')" = \
	"$(py "$tmp/chat" 'd["choices"][0]["message"]["content"][:5], "stop"')" ] || fail "chat stop: $(cat "$tmp/stop2")"
ok "stop strings ('$stop' across tokens), streamed and not; finish_reason stop"

# --- response_format: json_schema validates, json_object parses
schema='{"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}, "age": {"type": "integer", "minimum": 0, "maximum": 120}, "pet": {"enum": ["dog", "cat"]}}, "required": ["name", "age", "pet"], "additionalProperties": false}'
echo "$schema" >"$tmp/schema.json"
n_ok=0
for seed in 1 2 3 4; do
	for stream in false true; do
		code="$(post /v1/chat/completions "{\"messages\": $msgs, \"max_tokens\": 120, \"temperature\": 0.8, \"seed\": $seed, \"stream\": $stream, \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"person\", \"schema\": $schema}}}" "$tmp/js" -N)"
		[ "$code" = 200 ] || fail "json_schema: $code $(cat "$tmp/js")"
		if [ $stream = true ]; then sse "$tmp/js" >"$tmp/js.json"; else
			py "$tmp/js" 'json.dumps({"text": d["choices"][0]["message"]["content"], "finish": d["choices"][0]["finish_reason"]})' >"$tmp/js.json"; fi
		[ "$(py "$tmp/js.json" 'd["finish"]')" = stop ] || continue
		"$py3" - "$tmp/js.json" "$tmp/schema.json" <<'EOF' || fail "json_schema output: $(cat "$tmp/js.json")"
import json, sys, jsonschema
jsonschema.validate(json.loads(json.load(open(sys.argv[1]))["text"]), json.load(open(sys.argv[2])))
EOF
		n_ok=$((n_ok + 1))
	done
done
[ $n_ok -gt 0 ] || fail "no json_schema answer ended"
code="$(post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 200, \"temperature\": 0, \"response_format\": {\"type\": \"json_object\"}}" "$tmp/jo")"
[ "$code" = 200 ] || fail "json_object: $code $(cat "$tmp/jo")"
if [ "$(py "$tmp/jo" 'd["choices"][0]["finish_reason"]')" = stop ]; then
	[ "$(py "$tmp/jo" 'type(json.loads(d["choices"][0]["text"])).__name__')" = dict ] || fail "json_object: $(cat "$tmp/jo")"
else
	[ "$(py "$tmp/jo" 'd["choices"][0]["text"][:1]')" = "{" ] || fail "json_object: $(cat "$tmp/jo")"
fi
code="$(post /v1/completions "{\"prompt\": \"x\", \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"schema\": {\"type\": \"object\", \"properties\": {\"a\": {\"\$ref\": \"#/nowhere\"}}}}}}" "$tmp/bad")"
[ "$code" = 400 ] && [ "$(py "$tmp/bad" 'd["error"]["param"]')" = response_format ] || fail "bad schema: $code $(cat "$tmp/bad")"
ok "response_format: $n_ok json_schema answers of 8 ended and validate; json_object; a bad schema is 400"

# --- errors: OpenAI's error object, never a crash
check_error() { # STATUS PARAM CODE OUT: what came back
	[ "$3" = "$1" ] || fail "expected $1, got $3: $(cat "$4")"
	[ "$(py "$4" 'd["error"]["type"] in ("invalid_request_error", "server_error") and isinstance(d["error"]["message"], str)')" = True ] || fail "error object: $(cat "$4")"
	[ "$(py "$4" 'd["error"]["param"]')" = "$2" ] || fail "error param: $(cat "$4"), expected $2"
}
check_error 400 None "$(post /v1/chat/completions '{"messages": [' "$tmp/e")" "$tmp/e"
check_error 400 None "$(post /v1/chat/completions '' "$tmp/e")" "$tmp/e"
check_error 400 messages "$(post /v1/chat/completions '{"messages": "hi"}' "$tmp/e")" "$tmp/e"
check_error 400 messages "$(post /v1/chat/completions '{"messages": [{"role": "robot", "content": "hi"}]}' "$tmp/e")" "$tmp/e"
check_error 400 temperature "$(post /v1/chat/completions "{\"messages\": $msgs, \"temperature\": \"warm\"}" "$tmp/e")" "$tmp/e"
check_error 400 max_tokens "$(post /v1/completions '{"prompt": "a", "max_tokens": -1}' "$tmp/e")" "$tmp/e"
check_error 400 stop "$(post /v1/completions '{"prompt": "a", "stop": [1]}' "$tmp/e")" "$tmp/e"
long="$("$py3" -c 'print("Once upon a time " * 700)')"
check_error 400 prompt "$(post /v1/completions "{\"prompt\": \"$long\"}" "$tmp/e")" "$tmp/e"
grep -q 'the context holds 2048' "$tmp/e" || fail "too long: $(cat "$tmp/e")"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' -d '{"prompt": "a"}' "$base/v1/completions")"
check_error 401 None "$code" "$tmp/e"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' -H 'Authorization: Bearer wrong' -d '{"prompt": "a"}' "$base/v1/completions")"
check_error 401 None "$code" "$tmp/e"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' "$base/v1/models")"
check_error 401 None "$code" "$tmp/e"
"$py3" -c 'print("{\"prompt\": \"" + "a" * 70000 + "\"}")' >"$tmp/big"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' -H "Authorization: Bearer $key" --data-binary @"$tmp/big" "$base/v1/completions")"
check_error 413 None "$code" "$tmp/e"
grep -q 65536 "$tmp/e" || fail "413 does not name the limit: $(cat "$tmp/e")"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' -H "Authorization: Bearer $key" -H 'Transfer-Encoding: chunked' --data-binary @"$tmp/big" "$base/v1/completions")"
check_error 413 None "$code" "$tmp/e"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' -H "Authorization: Bearer $key" "$base/v1/nothing")"
check_error 404 None "$code" "$tmp/e"
code="$(curl -sS -o "$tmp/e" -w '%{http_code}' -H "Authorization: Bearer $key" "$base/v1/completions")"
check_error 405 None "$code" "$tmp/e"
kill -0 "$pid" || fail "the server died"
ok "400 (malformed, wrong types, unknown role, too long), 401, 404, 405, 413 (announced and chunked)"

# --- two streams at once and a third queued behind them, all answered
for i in 1 2 3; do
	post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 300, \"temperature\": 0, \"stream\": true}" "$tmp/p$i" -N >/dev/null &
done
wait $(jobs -p | grep -v "^$pid\$") 2>/dev/null
for i in 1 2 3; do
	sse "$tmp/p$i" >"$tmp/p$i.json" || fail "parallel stream $i"
	[ "$(py "$tmp/p$i.json" 'd["finish"], d["done"]')" = "('length', True)" ] || fail "parallel stream $i: $(cat "$tmp/p$i.json")"
done
[ "$(py "$tmp/p1.json" 'd["text"]')" = "$(py "$tmp/p3.json" 'd["text"]')" ] || fail "the queued stream differs"
ok "two slots streaming at once, a third request queued; the same greedy text"

# --- a client that leaves mid-stream, right after its first text, frees
# its slot: the slot says it stopped early, /health shows it idle, and it
# serves the next request
"$py3" - "$base" "$key" "$prompt" <<'EOF' || fail "the client that leaves"
import http.client, json, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
c.request("POST", "/v1/completions", json.dumps({"prompt": sys.argv[3], "max_tokens": 2000,
          "temperature": 0, "stream": True}), {"Authorization": "Bearer " + sys.argv[2]})
r = c.getresponse()
assert r.status == 200, r.status
while b'"text":""' in (line := r.readline()) or not line.startswith(b"data: "):
    pass
c.sock.close()  # gone, mid-stream
EOF
idle=
for _ in $(seq 40); do
	curl -sS "$base/health" >"$tmp/h"
	[ "$(py "$tmp/h" 'd["slots_busy"]')" = 0 ] && { idle=1; break; }
	sleep 0.05
done
[ -n "$idle" ] || fail "the slot stays busy after the client left: $(cat "$tmp/h")"
n_cut="$(sed -n 's/.*cancelled after \([0-9]*\) tokens (the client left).*/\1/p' "$tmp/log")"
[ -n "$n_cut" ] && [ "$n_cut" -lt 2000 ] || fail "no slot cancelled early"
code="$(post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 2000, \"temperature\": 0}" "$tmp/after")"
[ "$code" = 200 ] && [ "$(py "$tmp/after" 'd["usage"]["completion_tokens"]')" = 2000 ] || fail "a request after the disconnect: $code"
ok "a client leaving mid-stream cancels its generation after $n_cut of 2000 tokens; the slot serves the next"

# --- SIGTERM with a stream in flight: the stream ends with an error
# event, belt exits 0
post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 2000, \"temperature\": 0, \"stream\": true}" "$tmp/term" -N >/dev/null 2>&1 &
curl_pid=$!
for _ in $(seq 50); do grep -q '^data: ' "$tmp/term" 2>/dev/null && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
wait $curl_pid
[ $rc = 0 ] || fail "belt serve exited $rc after SIGTERM"
sse "$tmp/term" >"$tmp/term.json" || fail "the stream cut by SIGTERM: $(tail -c 400 "$tmp/term")"
[ "$(py "$tmp/term.json" '"shutting down" in d["error"]["message"] if d["error"] else d["finish"] is not None')" = True ] || fail "SIGTERM stream: $(cat "$tmp/term.json")"
grep -q 'SIGTERM: stopping' "$tmp/log" && grep -q 'belt serve: stopped' "$tmp/log" || fail "no stop in the log"
ok "SIGTERM with a stream in flight: it ends, exit 0"

# --- without --chat-template or a model template, chat is a 400 naming it
start
code="$(post /v1/chat/completions "{\"messages\": $msgs}" "$tmp/e")"
check_error 400 messages "$code" "$tmp/e"
grep -q 'chat-template' "$tmp/e" || fail "no hint: $(cat "$tmp/e")"
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "belt serve exited $rc after SIGINT"
ok "no chat template: 400 naming --chat-template; SIGINT exits 0"

# --- --context-shift: answers far past -c go on, as belt run's do; without
# max_tokens an answer ends after a context's worth of tokens
start -c 48 --context-shift --keep 2 --api-key "$key"
code="$(post /v1/completions "{\"prompt\": \"$prompt\", \"max_tokens\": 150, \"temperature\": 0}" "$tmp/c")"
[ "$code" = 200 ] || fail "completion with shifts: $code $(cat "$tmp/c")"
"$BELT_BIN" run -m "$model" -p "$prompt" -n 150 -c 48 --context-shift --keep 2 -t 2 >"$tmp/run.txt" 2>"$tmp/run.err" ||
	fail "belt run --context-shift"
grep -q "the context was shifted" "$tmp/run.err" || fail "belt run did not shift: $(cat "$tmp/run.err")"
code="$(post /v1/completions "{\"prompt\": \"$prompt\", \"temperature\": 0}" "$tmp/c2")"
[ "$code" = 200 ] || fail "completion without max_tokens: $code $(cat "$tmp/c2")"
"$py3" - "$tmp/c" "$tmp/run.txt" "$tmp/c2" <<'EOF' || fail "shifted completion against belt run"
import json, sys
d = json.load(open(sys.argv[1]))
run = open(sys.argv[2], encoding="utf-8").read()[:-1]
c = d["choices"][0]
assert c["text"] == run, (c["text"], run)
assert c["finish_reason"] == "length" and d["usage"]["completion_tokens"] == 150, d
d2 = json.load(open(sys.argv[3]))
c2 = d2["choices"][0]
assert c2["finish_reason"] in ("length", "stop"), d2
assert d2["usage"]["completion_tokens"] <= 48, d2
EOF
kill -TERM "$pid"
wait "$pid"
pid=
ok "--context-shift: 150 tokens in a context of 48, as belt run --context-shift"
echo "serve.sh: all passed"

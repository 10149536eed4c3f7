#!/usr/bin/env bash
# belt chat driven through tmux as a person at a terminal would drive it
# (doc/chat.md): stories260K with tests/chat-template.jinja (the model
# ships no template). First chat: two turns, the second evaluating only
# its new tokens (read from the stats line), /clear, /exit with status 0.
# Second chat: answers that would go on for minutes (the model never ends
# a story, -n and -c large), each stopped by Ctrl-C, which returns to the
# prompt; the next turn reuses the first; Ctrl-C at the empty prompt
# leaves with status 0. Every wait polls the pane with a generous limit.
# Needs BELT_BIN and BELT_SHARED_DIR (make check sets them) and tmux.
set -u
: "${BELT_BIN:?set by make check}" "${BELT_SHARED_DIR:?set by make check}"
command -v tmux >/dev/null || { echo "chat.sh: tmux is needed"; exit 1; }
srcdir="$(cd "$(dirname "$0")" && pwd)"
model="$BELT_SHARED_DIR/models/stories260K.f32.gguf"
template="$srcdir/chat-template.jinja"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/belt-chat-XXXXXX")"
# each chat has a tmux server of its own (socket $sock, one per start):
# a new session on the socket of a server being killed can fail with
# "server exited unexpectedly"
runs=0
sock="belt-chat-test-$$-0"
# /bin/sh runs the pane's command whatever the user's shell, so the test
# sees the same wrapper everywhere (dash, on Debian)
printf 'set-option -g history-limit 100000\nset-option -g default-shell /bin/sh\n' > "$tmp/tmux.conf"
tm() { tmux -L "$sock" -f "$tmp/tmux.conf" "$@"; }
cleanup() {
	tm kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "chat.sh: FAIL: $*"
	echo "--- the pane:"
	pane
	exit 1
}
ok() { echo "ok: $*"; }

# The pane's whole text (history included).
pane() { tm capture-pane -p -S - -t chat 2>/dev/null; }

# wait_for WHAT CMD...: poll until CMD (run on the pane's text, on its
# stdin) succeeds; 120 s at most.
wait_for() {
	local what="$1"
	shift
	for _ in $(seq 600); do
		pane | "$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "no $what after 120 s"
}

# The stats lines so far: "EVALUATED REUSED" each.
stats() { pane | sed -n 's/^belt: \([0-9]*\) prompt tokens evaluated, \([0-9]*\) reused.*/\1 \2/p'; }
n_stats() { stats | wc -l; }
has_stats() { [ "$(n_stats)" -ge "$1" ]; }
# The last non-empty line is the prompt.
at_prompt() { pane | awk 'NF { last = $0 } END { exit !(last == ">") }'; }
# More than a few lines follow the message typed after the prompt.
grows_after() { awk -v m="> $1" '$0 == m { n = 0; f = 1; next } f && NF { n++ } END { exit !(f && n > 3) }'; }

# start ARGS: belt chat in a new tmux server; its exit status goes to
# $tmp/rc. Ctrl-C reaches the whole foreground group, the wrapping shell
# too: the shell catches it (a handler, which belt does not inherit, as
# it would an ignored signal) so that it lives to write the status.
start() {
	runs=$((runs + 1))
	sock="belt-chat-test-$$-$runs"
	rm -f "$tmp/rc"
	tm new-session -d -s chat -x 160 -y 50 \
		"trap : INT; '$BELT_BIN' chat -m '$model' --chat-template '$template' -t 2 $*; echo \$? > '$tmp/rc'; sleep 600"
	wait_for "prompt at the start" at_prompt
}
say() {
	tm send-keys -t chat -l "$1"
	tm send-keys -t chat Enter
}
wait_exit() {
	for _ in $(seq 600); do
		[ -s "$tmp/rc" ] && return 0
		sleep 0.2
	done
	fail "belt chat did not exit after 120 s"
}

# --- two turns, /clear, /exit
N=24
start -n $N -sys "'You tell stories.'"
say "Tell me a story about a cat."
wait_for "stats line after the first answer" has_stats 1
read -r e1 r1 < <(stats | sed -n 1p)
[ "$r1" -eq 0 ] || fail "the first turn reused $r1 tokens"
[ "$e1" -gt 10 ] || fail "the first turn evaluated $e1 tokens"
ok "first turn: $e1 prompt tokens evaluated"
wait_for "prompt after the first answer" at_prompt
say "And one about a dog."
wait_for "stats line after the second answer" has_stats 2
read -r e2 r2 < <(stats | sed -n 2p)
# the cache holds the first prompt and the answer but its last token
[ "$r2" -eq $((e1 + N - 1)) ] ||
	fail "the second turn reused $r2 tokens, expected $e1 + $N - 1 (the first prompt and answer)"
[ "$e2" -lt "$e1" ] || fail "the second turn evaluated $e2 tokens, the first $e1"
ok "second turn: $e2 new tokens evaluated, $r2 reused"
wait_for "prompt after the second answer" at_prompt
say "/clear"
wait_for "/clear's note" grep -q "conversation is cleared"
say "Tell me a story about a cat."
wait_for "stats line after /clear" has_stats 3
read -r e3 r3 < <(stats | sed -n 3p)
[ "$r3" -eq 0 ] && [ "$e3" -eq "$e1" ] ||
	fail "after /clear: $e3 evaluated, $r3 reused (expected $e1 and 0)"
ok "after /clear the first turn again: $e3 evaluated, 0 reused"
wait_for "prompt after /clear" at_prompt
say "/exit"
wait_exit
[ "$(cat "$tmp/rc")" = 0 ] || fail "/exit: status $(cat "$tmp/rc")"
ok "/exit: status 0"
tm kill-server

# --- Ctrl-C mid-answer, the next turn, Ctrl-C at the prompt
start -n 1000000 -c 65536
say "Tell me a long story."
wait_for "a long answer streaming" grows_after "Tell me a long story."
tm send-keys -t chat C-c
wait_for "stats line after Ctrl-C" has_stats 1
pane | grep -q "^belt: .*; stopped$" || fail "the stats line does not say the answer was stopped"
wait_for "prompt after Ctrl-C" at_prompt
[ -s "$tmp/rc" ] && fail "Ctrl-C mid-answer ended belt chat"
read -r e1 r1 < <(stats | sed -n 1p)
ok "Ctrl-C stopped the answer and returned to the prompt"
say "Another one."
wait_for "the second answer streaming" grows_after "Another one."
tm send-keys -t chat C-c
wait_for "stats line of the second turn" has_stats 2
read -r e2 r2 < <(stats | sed -n 2p)
[ "$r2" -gt "$e1" ] || fail "the turn after Ctrl-C reused $r2 tokens (its first prompt: $e1)"
ok "the turn after Ctrl-C answered, reusing $r2 tokens, evaluating $e2"
wait_for "prompt after the second Ctrl-C" at_prompt
tm send-keys -t chat C-c
wait_exit
[ "$(cat "$tmp/rc")" = 0 ] || fail "Ctrl-C at the prompt: status $(cat "$tmp/rc")"
ok "Ctrl-C at the empty prompt: status 0"
exit 0

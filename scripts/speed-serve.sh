#!/usr/bin/env bash
# speed-serve.sh BIN TOOLS TASKS [N]: CPU time of a `capbroker serve`
# process per POST /v1/select, lexical then hybrid (the default), over the
# same catalog with its card vectors cached, N distinct tasks each (one
# task a line in TASKS, plain text; the first N). Prints one line a ranker:
# ranker, requests, CPU ms per select. Data and cache go to a temporary
# HOME, so nothing of the user's is read or written.
#
# By default each select is its own curl process and connection, as a
# hook or script calls the server; KEEPALIVE=1 sends them all from one
# curl process over one connection, as a program holding a client does.
# The server's cost of a new connection (about 0.6-0.8 ms of CPU here)
# is then gone from both rankers. RATE (with KEEPALIVE=1; curl's --rate,
# such as 200/s or 50/s) spaces the requests out, as a server that waits
# between requests sees them: caches cool and the CPU idles between
# them, which costs a hybrid select more than a lexical one
# (docs/speed.md, round seven).
set -euo pipefail
bin=$1 tools=$2 tasks=$3 n=${4:-200}
home=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$home"' EXIT
export HOME=$home XDG_CACHE_HOME=$home/cache XDG_DATA_HOME=$home/data XDG_CONFIG_HOME=$home/config
"$bin" embed --tools "$tools" >/dev/null 2>&1
tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14+$15)*1000/t}' "/proc/$1/stat"; }
for ranker in lexical hybrid; do
	out=$home/serve-$ranker.out
	CAPBROKER_RANKER=$ranker "$bin" serve --addr 127.0.0.1:0 --tools "$tools" >"$out" 2>/dev/null &
	pid=$!
	for _ in $(seq 100); do grep -q http "$out" 2>/dev/null && break; sleep 0.1; done
	url=$(grep -o 'http://[^ ]*' "$out" | head -1)/v1/select
	# Warm up: one request, the vectors ready.
	for _ in $(seq 50); do
		curl -s -H 'Content-Type: application/json' -X POST -d '{"task":"warm up the server"}' "$url" | grep -q '"similarity"' && break
		[ $ranker = lexical ] && break
		sleep 0.2
	done
	if [ "${KEEPALIVE:-}" = 1 ]; then
		# One curl, one connection: a config of n requests (written
		# before the count starts).
		head -n "$n" "$tasks" | jq -Rr --arg u "$url" '"url = \"\($u)\"\nheader = \"Content-Type: application/json\"\ndata-binary = \({task: .} | tojson | tojson)\noutput = \"/dev/null\"\nnext"' | sed '$d' >"$home/requests.conf"
		c0=$(cpu $pid)
		curl -s ${RATE:+--rate "$RATE"} -K "$home/requests.conf"
	else
		c0=$(cpu $pid)
		head -n "$n" "$tasks" | while IFS= read -r t; do
			jq -cn --arg t "$t" '{task:$t}' | curl -s -o /dev/null -H 'Content-Type: application/json' -X POST --data-binary @- "$url"
		done
	fi
	c1=$(cpu $pid)
	kill $pid; wait $pid 2>/dev/null || true
	pid=
	awk -v r=$ranker -v n="$n" -v a="$c0" -v b="$c1" 'BEGIN{printf "%s %d selects: %.2f ms CPU a select\n", r, n, (b-a)/n}'
done

# shellcheck shell=bash
# Installs HAProxy from Debian's packages if missing: the balancer of the
# fleet test (gateway's TestFleetHAProxy: PostgreSQL, three gateway
# replicas, HAProxy without affinity) and of deploy/compose. Sourced by
# scripts/test-all.sh; safe to run again. It only installs the binary: the
# test writes its own configuration and runs its own HAProxy on loopback
# (the package's service is not used). On failure it says why; the fleet
# test then skips locally and fails under CI=true.
#
# Run it alone with:  source scripts/setup.d/60-haproxy.sh

capbroker_haproxy_setup() {
	if command -v haproxy >/dev/null 2>&1; then
		echo "haproxy: $(haproxy -v 2>/dev/null | head -1)"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "haproxy: not installed; run as root or: sudo apt-get install -y haproxy" >&2
		return 1
	fi
	echo "haproxy: installing from Debian packages"
	# The package would start its own service: keep it from starting
	# (policy-rc.d), so nothing listens on the machine's port 80.
	local prc=/usr/sbin/policy-rc.d made=""
	if [ ! -e "$prc" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$prc" && chmod 755 "$prc" && made=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends haproxy >/dev/null
	local rc=$?
	[ -n "$made" ] && rm -f "$prc"
	[ $rc = 0 ] || return 1
	command -v haproxy >/dev/null 2>&1 || { echo "haproxy: installed, but not on PATH" >&2; return 1; }
	echo "haproxy: $(haproxy -v 2>/dev/null | head -1)"
}

capbroker_haproxy_setup || echo "haproxy: setup failed; the fleet test will skip (or fail under CI=true)" >&2
unset -f capbroker_haproxy_setup

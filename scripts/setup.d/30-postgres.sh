# shellcheck shell=bash
# Installs PostgreSQL from Debian's packages if missing, runs a private
# cluster for the tests under $CAPBROKER_DEPS/pg (loopback only, a free
# port, password auth), creates the database capbroker_test and exports
# CAPBROKER_TEST_POSTGRES. When it starts the server (not when one was
# already running) it sets CAPBROKER_PG_STARTED (the data folder) and
# CAPBROKER_PG_CTL, and scripts/test-all.sh stops that server on exit. Sourced by scripts/test-all.sh; safe to run
# again (an already running cluster is reused). On failure it says why and
# leaves CAPBROKER_TEST_POSTGRES unset: the Postgres tests then skip
# locally and fail under CI=true.
#
# Run it alone with:  CAPBROKER_DEPS=$PWD/.deps; source scripts/setup.d/30-postgres.sh

capbroker_pg_setup() {
	local deps=${CAPBROKER_DEPS:-$PWD/.deps}
	local dir="$deps/pg" bin="" v
	for v in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do bin=$v; done
	if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "postgres: not installed; run as root or: sudo apt-get install -y postgresql" >&2
			return 1
		fi
		echo "postgres: installing from Debian packages"
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq postgresql >/dev/null || return 1
		for v in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do bin=$v; done
		[ -n "$bin" ] || { echo "postgres: installed, but no /usr/lib/postgresql/*/bin" >&2; return 1; }
	fi

	# Root may not run the server: run it as the postgres user, which must
	# own the cluster's folder.
	local -a as=()
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || { echo "postgres: no postgres user" >&2; return 1; }
		as=(runuser -u postgres --)
	fi
	mkdir -p "$dir" || return 1
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir" && chmod 700 "$dir" || return 1
		if ! "${as[@]}" test -w "$dir"; then
			# The checkout sits under a folder the postgres user cannot
			# search (such as /root): keep the cluster in /var/tmp instead,
			# one per checkout.
			local alt
			alt="/var/tmp/capbroker-pg-$(printf '%s' "$dir" | sha256sum | cut -c1-12)"
			echo "postgres: the postgres user cannot reach $dir; using $alt"
			rmdir "$dir" 2>/dev/null
			dir=$alt
			mkdir -p "$dir" && chown postgres: "$dir" && chmod 700 "$dir" || return 1
			"${as[@]}" test -w "$dir" || { echo "postgres: the postgres user cannot write $dir" >&2; return 1; }
		fi
	fi

	local data="$dir/data" pwfile="$dir/password" portfile="$dir/port" log="$dir/server.log"
	if [ ! -s "$data/PG_VERSION" ]; then
		echo "postgres: creating a cluster in $data"
		rm -rf "$data"
		head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$dir/password.tmp" && mv "$dir/password.tmp" "$pwfile"
		[ "$(id -u)" = 0 ] && chown postgres: "$pwfile"
		chmod 600 "$pwfile"
		"${as[@]}" "$bin/initdb" -D "$data" -U postgres --pwfile="$pwfile" \
			--auth-host=scram-sha-256 --auth-local=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
			echo "postgres: initdb failed; see $dir/initdb.log" >&2
			return 1
		}
	fi

	local port=""
	[ -s "$portfile" ] && port=$(cat "$portfile")
	if ! "${as[@]}" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		# Keep the last port if it is still free, else find a free one.
		if [ -z "$port" ] || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			port=""
			for v in $(seq 54329 54429); do
				if ! (exec 3<>"/dev/tcp/127.0.0.1/$v") 2>/dev/null; then port=$v; break; fi
			done
			[ -n "$port" ] || { echo "postgres: no free port in 54329-54429" >&2; return 1; }
		fi
		echo "$port" >"$portfile"
		"${as[@]}" "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
			-o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=on" start >/dev/null || {
			echo "postgres: the server did not start; see $log" >&2
			return 1
		}
		# Started here: scripts/test-all.sh stops it when it ends.
		CAPBROKER_PG_STARTED=$data
		CAPBROKER_PG_CTL="${as[*]} $bin/pg_ctl"
	fi

	local pass
	pass=$(cat "$pwfile") || return 1
	if ! PGPASSWORD=$pass "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
		"SELECT 1 FROM pg_database WHERE datname = 'capbroker_test'" | grep -q 1; then
		PGPASSWORD=$pass "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc \
			"CREATE DATABASE capbroker_test" || { echo "postgres: cannot create the database" >&2; return 1; }
	fi
	export CAPBROKER_TEST_POSTGRES="postgres://postgres:$pass@127.0.0.1:$port/capbroker_test?sslmode=disable"
	echo "postgres: ready on 127.0.0.1:$port (CAPBROKER_TEST_POSTGRES exported)"
}

capbroker_pg_setup || echo "postgres: setup failed; Postgres tests will skip (or fail under CI=true)" >&2
unset -f capbroker_pg_setup

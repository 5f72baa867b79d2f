#!/usr/bin/env bash
# A private PostgreSQL server for the tests, in a directory of its own: initdb and
# pg_ctl as an unprivileged user (the server refuses root), a socket in DIR/sock and
# TCP on 127.0.0.1 with TLS (a test CA made here), trust authentication.
#
#   scripts/pg-server.sh start DIR   # writes DIR/env (KBENCH_TEST_PG=URL, ...), prints it
#   scripts/pg-server.sh stop DIR    # stops it; DIR stays until the caller removes it
#   scripts/pg-server.sh restart DIR # starts it again on the same port and data
#
# Durability is off (fsync=off): the tests kill clients, never this server's host.
set -euo pipefail
cmd=${1:-} dir=${2:-}
if [[ -z $cmd || -z $dir ]]; then
    echo "usage: pg-server.sh start|stop|restart DIR" >&2
    exit 2
fi
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [[ -z $bindir || ! -x $bindir/initdb ]]; then
    echo "pg-server.sh: no PostgreSQL server here (apt-get install postgresql)" >&2
    exit 2
fi
owner=$(id -un)
[[ $(id -u) -eq 0 ]] && owner=postgres
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u "$owner" -- "$@"
    else
        "$@"
    fi
}

start_server() {
    port=$(cat "$dir/port")
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir/sock -p $port -c listen_addresses=127.0.0.1 -c fsync=off \
            -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
            -c ssl=on -c ssl_cert_file=$dir/tls/server.crt -c ssl_key_file=$dir/tls/server.key" \
        start >/dev/null
}

case $cmd in
start)
    mkdir -p "$dir/data" "$dir/sock" "$dir/tls"
    # A test CA and a server certificate for localhost and 127.0.0.1 signed by it.
    (
        cd "$dir/tls"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout ca.key -out ca.crt -days 30 -subj /CN=kbench-test-ca 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' >ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
            -out server.crt -days 30 -extfile ext 2>/dev/null
        chmod 600 server.key
    )
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' >"$dir/port"
    [[ $owner != "$(id -un)" ]] && chown -R "$owner" "$dir"
    chmod 755 "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -U kbench --auth=trust -E UTF8 --no-sync >"$dir/initdb.log"
    start_server
    port=$(cat "$dir/port")
    {
        echo "KBENCH_TEST_PG=postgres://kbench@127.0.0.1:$port/postgres"
        echo "KBENCH_TEST_PG_CA=$dir/tls/ca.crt"
        echo "KBENCH_TEST_PG_SOCKET=$dir/sock"
    } >"$dir/env"
    cat "$dir/env"
    ;;
restart)
    start_server
    ;;
stop)
    if [[ -f $dir/data/postmaster.pid ]]; then
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    fi
    ;;
*)
    echo "usage: pg-server.sh start|stop|restart DIR" >&2
    exit 2
    ;;
esac

#!/bin/sh
# as_hosts.sh: runs a rank as if every rank were on its own host (CSN_HOST differs, CSN_ADDR set), so ranks must meet over TCP.
CSN_HOST="fakehost$CSN_RANK" CSN_ADDR=127.0.0.1 exec "$@"

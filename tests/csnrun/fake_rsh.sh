#!/bin/sh
# fake_rsh.sh: stands in for ssh in the tests: "fake_rsh.sh HOST COMMAND" runs COMMAND here, in an empty environment.
shift
exec env -i PATH="$PATH" HOME="${HOME:-/}" sh -c "$*"

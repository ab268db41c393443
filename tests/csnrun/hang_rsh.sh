#!/bin/sh
# hang_rsh.sh: stands in for an ssh that cannot reach its host: "hang_rsh.sh HOST COMMAND" says nothing and waits.
exec sleep 600

#!/usr/bin/env bash
# The README's second command, `bash .ci/run`, exactly as written, in a fresh
# Debian 12 (default) or 13 container (debian:RELEASE-slim, imported by
# engine.py) with a copy of this repo mounted. By hand, not in CI: CI would
# run itself inside itself.
#   bash tests/container/fresh-ci.sh [bookworm|trixie]   # log in /tmp/folio-fresh-ci-*/log
# What the container needs, and why: docs/testing.md, whose `docker run`
# line this runs (test_container.py's FreshCiScript holds the two to the
# same options). The engine's socket is whichever engine.py gives.
set -euo pipefail
cd "$(dirname "$0")/../.."
release=${1:-bookworm}
if [[ -z "${DOCKER_HOST:-}" ]]; then
  exec python3 tests/container/engine.py --base "$release" -- bash "$0" "$@"
fi
work=$(mktemp -d /tmp/folio-fresh-ci-XXXXXX)
chmod 755 "$work"
mkdir -p "$work/tmp" "$work/repo"
chmod 1777 "$work/tmp"
tar -c --exclude='./build*' --exclude=node_modules --exclude=.git . | tar -x -C "$work/repo"
ca=/etc/ssl/certs/ca-certificates.crt
echo "fresh-ci: bash .ci/run in a fresh debian:$release-slim; log: $work/log"
set +e
"$DOCKER" run --rm --name "folio-fresh-ci-$$" \
  --cap-add SYS_ADMIN --security-opt seccomp=unconfined --network host \
  -v "$work/repo:/repo" -w /repo \
  -v "$work/tmp:$work/tmp" -e TMPDIR="$work/tmp" \
  -v "${DOCKER_HOST#unix://}:/var/run/docker.sock" \
  -v /var/cache/folio-ci:/var/cache/folio-ci \
  -v "$ca:/host-ca/ca-certificates.crt:ro" -e NODE_EXTRA_CA_CERTS=/host-ca/ca-certificates.crt \
  "debian:$release-slim" \
  bash -c 'printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && bash .ci/run' \
  >"$work/log" 2>&1
status=$?
set -e
tail -n 12 "$work/log"
echo "fresh-ci: exit $status (log: $work/log)"
exit "$status"

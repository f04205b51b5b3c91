#!/usr/bin/env bash
# The README's two commands, exactly as written, each in fresh Debian 12 and
# Debian 13 containers (minbase, made by mmdebstrap through engine.py) with a
# copy of this repo: what the README says holds on both releases. By hand,
# not in CI (the second command is the whole CI: half an hour each).
#   bash tests/container/fresh.sh [bookworm|trixie]...   # both by default
# The first command must serve this repo's article (a 200 with its title,
# asked from inside the container); the second must exit 0 (fresh-ci.sh,
# whose log it names). Ends with one line per release and command: the
# result and the seconds it took.
set -euo pipefail
cd "$(dirname "$0")/../.."
releases=("$@")
((${#releases[@]})) || releases=(bookworm trixie)
if [[ -z "${DOCKER_HOST:-}" ]]; then
  bases=()
  for r in "${releases[@]}"; do bases+=(--base "$r"); done
  exec python3 tests/container/engine.py "${bases[@]}" -- bash "$0" "${releases[@]}"
fi
first=$(sed -n '/^```sh$/{n;p;q}' README.md | sed 's/ *#.*//')
[[ $first == "bash .ci/setup && build/src/folio" ]] || { echo "fresh: the README's first command is now '$first'" >&2; exit 2; }
work=$(mktemp -d /tmp/folio-fresh-XXXXXX)
chmod 755 "$work"
tar -c --exclude='./build*' --exclude=node_modules --exclude=.git . | tar -x -C "$work"
results=()

# The first command in a fresh RELEASE container: to "serving" and a 200.
first_command() {
  local release=$1 name="folio-fresh-$$-$1" start=$SECONDS out=""
  "$DOCKER" run -d --name "$name" -v "$work:/repo:ro" "debian:$release-slim" \
    bash -c "cp -a /repo /work && cd /work && $first" >/dev/null
  for _ in $(seq 900); do
    out=$("$DOCKER" logs "$name" 2>&1)
    [[ $out == *"folio: serving"* ]] && break
    [[ $("$DOCKER" inspect -f '{{.State.Running}}' "$name") == true ]] || break
    sleep 1
  done
  local page
  page=$("$DOCKER" exec "$name" python3 -c "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:8000/', timeout=5).read().decode())" 2>&1 || true)
  printf '%s\n' "$out" >"$work/first-$release.log"
  "$DOCKER" rm -f "$name" >/dev/null
  if [[ $page == *"<title>The Memory Wall"* ]]; then
    results+=("$release  first command   ok      $((SECONDS - start)) s")
  else
    results+=("$release  first command   FAILED  $((SECONDS - start)) s (log: $work/first-$release.log)")
  fi
}

for release in "${releases[@]}"; do
  echo "fresh: $release: $first"
  first_command "$release"
  echo "fresh: $release: bash .ci/run"
  start=$SECONDS
  if bash tests/container/fresh-ci.sh "$release" >"$work/second-$release.out" 2>&1; then
    results+=("$release  second command  ok      $((SECONDS - start)) s ($(tail -n 2 "$work/second-$release.out" | head -n 1))")
  else
    results+=("$release  second command  FAILED  $((SECONDS - start)) s ($(tail -n 1 "$work/second-$release.out"))")
  fi
done
printf '%s\n' "${results[@]}"
[[ "${results[*]}" != *FAILED* ]]

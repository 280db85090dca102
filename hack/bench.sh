#!/usr/bin/env bash
# make bench: Go benchmarks (benchstat input in bench/go-bench.txt), then the
# scenario benchmarks of issue 9 (bench/, go test), which write
# bench/results.md and bench/results.json. Figures only: nothing asserts a
# timing. Not part of make test or CI.
#
# Environment (defaults in brackets):
#   BENCH_OUT         output directory [bench]
#   BENCH_COUNT       -count of the Go benchmarks [5]
#   BENCH_ROUNDS      rounds per latency/creation figure [5]
#   BENCH_BIG_ROUNDS  creation rounds at N=500 [5]
#   BENCH_QPS_BIG_ROUNDS  rounds at N=500 with the client-side limiter (--kube-api-qps 50) [3]
#   BENCH_SHARD_ROUNDS    rounds of the two shards splitting 500 [3]
#   BENCH_SCALES      N for the creation figures [1,50,500]
#   BENCH_IDLE        length of the idle window [1m]
#   BENCH_PHASES      scale,flux,leader-off,qps,shards,takeover,rollout,monorepo [all]
#   BENCH_MONO_K      path counts K of the monorepo phase [1,10,100]
#   FLUX              0 skips Flux (neither built by make bench nor run) [1]
#   BENCH_FLUX_BIG_ROUNDS  Flux's creation rounds at N=500 [3, at most BENCH_BIG_ROUNDS]
#   BENCH_SHARD_N     repositories split over the two shards [500]
#   BENCH_SKIP_GO     set to skip the Go benchmarks (reuse go-bench.txt)
#   BENCH_GIT         http-backend or gitea: who serves the repositories
#                     (gitea: a real Gitea's own smart HTTP) [http-backend]
#   BENCH_BINARY      measure this bg-gitops binary instead of building one
#                     (an earlier commit's, for a before/after figure)
#
# `hack/bench.sh render` only rewrites results.md from results.json and
# notes.md (the hand-written reading of the figures), running nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
GO=${GO:-go}
OUT=${BENCH_OUT:-$ROOT/bench}
if [[ "${1:-}" == render ]]; then
  BGGITOPS_BENCH_RENDER="$OUT" exec $GO test -tags bench -count=1 -run '^TestRenderReport$' ./bench
fi
mkdir -p "$OUT" "$OUT/profiles"
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/bg-gitops-bench-logs-XXXXXX")
export BGGITOPS_BIN_DIR=${BGGITOPS_BIN_DIR:-$ROOT/bin}

start=$(date +%s)
# The controller runs as the image builds it (Dockerfile): -tags nodev
# leaves out the local environment, -s -w the symbol tables.
if [[ -n "${BENCH_BINARY:-}" ]]; then
  export BGGITOPS_BENCH_BINARY=$BENCH_BINARY
else
  CGO_ENABLED=0 $GO build -trimpath -tags nodev -ldflags "-s -w" -o "$ROOT/bin/bg-gitops-image" ./cmd/bg-gitops
fi

if [[ -z "${BENCH_SKIP_GO:-}" ]]; then
  echo "== Go benchmarks (-count ${BENCH_COUNT:-5}) → $OUT/go-bench.txt"
  $GO test -run '^$' -bench . -benchmem -count "${BENCH_COUNT:-5}" -timeout 30m \
    ./internal/source ./internal/render ./internal/apply | tee "$OUT/go-bench.txt"
  # The controller-level benchmarks run a real control plane per iteration
  # (one transition; 200 idle FlinkBlueGreenDeployments for 20 s): once.
  $GO test -run '^$' -bench . -benchtime 5x -count 1 -timeout 30m ./internal/reconcile | tee -a "$OUT/go-bench.txt"
fi

echo "== scenario benchmarks → $OUT/results.md (controller logs: $LOGS)"
set +e
BGGITOPS_BENCH_OUT="$OUT" BENCH_LOG_DIR="$LOGS" \
  $GO test -tags bench -count=1 -timeout 60m -run '^TestScenarios$' -v ./bench 2>&1 | tee "$LOGS/scenarios.log"
status=${PIPESTATUS[0]}
set -e
echo "== make bench took $(( $(date +%s) - start ))s; report: $OUT/results.md"
exit "$status"

#!/usr/bin/env bash
# diff --base (issue 20) on a generated checkout of BENCH_DIFF_APPS (200)
# Applications, each a kustomize directory of BENCH_DIFF_OBJECTS (10)
# objects (internal/benchgen/cmd/appsetgen), where the head commit changes
# one app's kustomization. Next to it: one app's render and check plus the
# git cost (worktree add + the changed-file listing + worktree remove), and
# rendering everything twice (two checks of all Applications). Called by
# `make bench` (GATE set); prints the figures, the ratios and the goal
# (diff under 2× one app's render plus the git cost).
set -euo pipefail
cd "$(dirname "$0")/.."
GATE=${GATE:?} GO=${GO:-go} RUNS=${BENCH_RUNS:-3}
APPS=${BENCH_DIFF_APPS:-200} OBJECTS=${BENCH_DIFF_OBJECTS:-10}
REPO=https://github.com/example/bench-gitops.git
work=$(mktemp -d)
co=$work/co
trap 'git -C "$co" worktree prune 2>/dev/null || true; rm -rf "$work"' EXIT
"$GO" build -o "$work/appsetgen" ./internal/benchgen/cmd/appsetgen
"$work/appsetgen" -dir "$co" -apps "$APPS" -objects "$OBJECTS"
g() { git -C "$co" -c user.name=bench -c user.email=bench@example.com "$@"; }
g init -q -b main && g add -A && g commit -qm base
printf 'labels: [{pairs: {tier: changed}}]\n' >>"$co/apps/app-007/kustomization.yaml"
g commit -qam "app-007: one more label"

# measure NAME CMD: wall seconds and peak RSS (MiB) of one run, in $co.
measure() {
	local t rc=0
	(cd "$co" && /usr/bin/time -o "$work/time" -f '%e %M %U %S' bash -c "$2" >"$work/$1.out" 2>"$work/$1.err") || rc=$?
	read -r wall rss usr sys < <(tail -n 1 "$work/time")
	echo "$1 $wall $((rss / 1024)) $rc $(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')"
}
gitcost='wt=$(mktemp -d) && git worktree add -q --detach "$wt" HEAD~1 && git diff --name-only --no-renames -z HEAD~1 -- >/dev/null && git ls-files --others --directory -z >/dev/null && git worktree remove --force "$wt"'
for _ in $(seq "$RUNS"); do
	measure diff "'$GATE' diff --base HEAD~1 -f written/ --apps-root . --repo-url $REPO"
	measure one "'$GATE' check -k apps/app-007"
	measure git "$gitcost"
	measure all "'$GATE' check -f written/ --apps-root . --repo-url $REPO"
done | awk -v apps="$APPS" -v objects="$OBJECTS" '
	{ w[$1] += $2; c[$1] += $5; n[$1]++; if ($3 > m[$1]) m[$1] = $3; rc[$1] = $4 }
	END {
		for (k in w) { w[k] /= n[k]; c[k] /= n[k] }
		printf "diff-%d diff --base, 1 of %d apps changed   wall %6.2fs  cpu %6.2fs  peak RSS %4d MiB  exit %d (mean of %d)\n", apps, apps, w["diff"], c["diff"], m["diff"], rc["diff"], n["diff"]
		printf "diff-%d one app: check -k (%d objects)       wall %6.2fs  cpu %6.2fs  peak RSS %4d MiB\n", apps, objects, w["one"], c["one"], m["one"]
		printf "diff-%d git: worktree add + changed + remove  wall %6.2fs  cpu %6.2fs\n", apps, w["git"], c["git"]
		printf "diff-%d everything once: check of %d apps    wall %6.2fs  cpu %6.2fs  peak RSS %4d MiB; twice %.2fs wall, %.2fs cpu\n", apps, apps, w["all"], c["all"], m["all"], 2 * w["all"], 2 * c["all"]
		bw = w["one"] + w["git"]; bc = c["one"] + c["git"]
		printf "diff-%d ratio diff / (one app + git) = %.2f wall, %.2f cpu  (goal < 2: %s)\n", apps, w["diff"] / bw, c["diff"] / bc, (w["diff"] < 2 * bw) ? "met" : "MISSED"
		printf "diff-%d ratio diff / everything twice = %.2f wall, %.2f cpu\n", apps, w["diff"] / (2 * w["all"]), c["diff"] / (2 * c["all"])
	}'
grep -h 'neither rendered again' "$work/diff.out" | sed 's/^/diff: /' || echo "diff: (no app reported as neither rendered again nor checked)"

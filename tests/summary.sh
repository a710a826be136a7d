#!/bin/sh
# summary.sh BUILD_DIR... - add up the results of tests/run.sh runs.
passed=0
failed=0
for b in "$@"; do
	[ -f "$b/results" ] || continue
	passed=$((passed + $(grep -c '^pass ' "$b/results")))
	failed=$((failed + $(grep -c '^fail ' "$b/results")))
done
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

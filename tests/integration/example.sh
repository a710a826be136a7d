#!/bin/sh
# example.sh BUILD - the README's first command works: the example runs,
# its work checks out, and its profile names its own hot functions.
B=${1:-build}
out=$("$B/examples/crunch" 2>&1) || { echo "$out"; echo "not ok: crunch failed"; exit 1; }
echo "$out"
fail=0
echo "$out" | grep -q "round trip ok" || { echo "not ok: no round trip"; fail=1; }
for fn in fnv1a lz_compress lz_decompress merge_sort; do
	echo "$out" | grep -Eq "^ *[0-9.]+% .* $fn$" || { echo "not ok: $fn not in the profile"; fail=1; }
done
# The statistics line adds up: taken = counted + outside + dropped.
echo "$out" | awk '/^samples taken/ {
	taken = $3; counted = $6; outside = $12; dropped = $15
	if (taken != counted + outside + dropped || taken < 100) exit 1; ok = 1 }
	END { exit !ok }' || { echo "not ok: statistics line"; fail=1; }
# Its three threads at least (a sanitizer's own thread, made with a raw
# clone, is found and sampled too).
echo "$out" | awk '/threads sampled/ { for (i = 1; i < NF; i++) if ($(i + 1) == "threads") n = $i }
	END { exit !(n >= 3) }' || { echo "not ok: threads"; fail=1; }
exit $fail

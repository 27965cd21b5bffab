#!/usr/bin/env bash
# Pins the model's outputs so that a refactor or a speed-up can be shown to
# change nothing:
#
#   tools/pin-outputs.sh write build/sim/cowsim /tmp/pin-before   # on the old build
#   tools/pin-outputs.sh write build/sim/cowsim /tmp/pin-after    # on the new one
#   tools/pin-outputs.sh compare /tmp/pin-before /tmp/pin-after
#
# `write` generates deterministic synthetic traces (no dependence on the
# machine's /usr) and replays each under every design x policy x mount the
# model accepts, plus node sizes, lazytime models and a small device, writing
# one CSV and one per-subvolume CSV per run. `compare` compares every pair of
# CSVs on the columns both have, byte for byte per field, so a branch that
# only *adds* columns still compares; it names every difference and exits 1.
set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

write() {
	local cowsim=$1 out=$2
	mkdir -p "$out/traces"
	local t=$out/traces
	"$cowsim" gen seed-experiment --files 3000 --snapshots 5 --seed 7 -o "$t/seed.trace"
	"$cowsim" gen seed-experiment --files 1500 --snapshots 3 --readonly --grep trunk -o "$t/seed-ro.trace"
	"$cowsim" gen backup-rotation --files 1500 --days 12 --keep 4 --read-fraction 0.2 -o "$t/rotation.trace"
	"$cowsim" gen mutt --snapshots 2 --days 3 -o "$t/mutt.trace"
	"$cowsim" gen tmpwatch --files 1500 --days 2 -o "$t/tmpwatch.trace"
	"$cowsim" gen find --files 1500 --snapshots 2 --scope all -o "$t/find.trace"
	"$cowsim" gen tar --files 1500 --snapshots 2 -o "$t/tar.trace"
	"$cowsim" gen hsm-scan --files 1500 -o "$t/hsm.trace"
	local trace design policy mount name
	for trace in "$t"/*.trace; do
		name=$(basename "$trace" .trace)
		for design in btrfs keyed; do
			for policy in inline side-table threshold:5% snapshot-aware; do
				[ "$design" = keyed ] && [ "$policy" = side-table ] && continue
				for mount in strictatime relatime noatime; do
					run "$cowsim" "$out" "$trace" "$name" --design "$design" --policy "$policy" --mount "$mount"
				done
			done
		done
	done
	trace=$t/seed.trace
	run "$cowsim" "$out" "$trace" seed --nodesize 4K --mount strictatime
	run "$cowsim" "$out" "$trace" seed --nodesize 64K --mount strictatime --policy side-table
	run "$cowsim" "$out" "$trace" seed --mount strictatime,lazytime --lazytime vfs
	run "$cowsim" "$out" "$trace" seed --mount strictatime --metadata single
	run "$cowsim" "$out" "$trace" seed --mount strictatime --immediate-writeback
	run "$cowsim" "$out" "$trace" seed --mount strictatime --device-size 600M --keep-going
	run "$cowsim" "$out" "$t/rotation.trace" rotation --mount strictatime --every 2000
}

# run COWSIM OUT TRACE NAME OPTION...: one replay, named by its options.
run() {
	local cowsim=$1 out=$2 trace=$3 name=$4
	shift 4
	local tag
	tag=$(printf '%s' "$name $*" | tr -c 'A-Za-z0-9.\n' '_')
	"$cowsim" run "$trace" -q "$@" --csv "$out/$tag.csv" --subvolume-csv "$out/$tag.subvol.csv" \
		>/dev/null 2>"$out/$tag.stderr" || echo "exit $?" >>"$out/$tag.stderr"
}

compare() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import csv, os, sys
a, b = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(a) if f.endswith('.csv'))
bad = 0
for f in names:
    pb = os.path.join(b, f)
    if not os.path.exists(pb):
        print(f"{f}: missing in {b}"); bad += 1; continue
    ra = list(csv.DictReader(open(os.path.join(a, f))))
    rb = list(csv.DictReader(open(pb)))
    if len(ra) != len(rb):
        print(f"{f}: {len(ra)} rows vs {len(rb)}"); bad += 1; continue
    common = [c for c in (ra[0].keys() if ra else []) if rb and c in rb[0]]
    for i, (x, y) in enumerate(zip(ra, rb)):
        diff = [c for c in common if x[c] != y[c]]
        if diff:
            print(f"{f}: row {i + 2}: " + ", ".join(f"{c} {x[c]} -> {y[c]}" for c in diff[:6]))
            bad += 1
            break
print(f"{len(names)} CSVs compared on their common columns, {bad} differ")
sys.exit(1 if bad else 0)
EOF
}

case "${1:-}" in
write) [ $# -eq 3 ] || usage; write "$2" "$3" ;;
compare) [ $# -eq 3 ] || usage; compare "$2" "$3" ;;
*) usage ;;
esac

#!/usr/bin/env bash
# tests/workloads/test_scenarios.sh COWSIM SCENARIOS_DIR - the example scenario
# files (workloads/scenarios/) generate and replay, and bad scenario files are
# refused with FILE:LINE: [group] key (TAP).
#
# The examples run scaled down (--set) so that each replays in a few seconds;
# COWSIM_SCENARIOS=full runs them as shipped (about a minute in all).
set -u
cowsim=$1
dir=$2
. "$(dirname "$0")/../tap.sh"
full=${COWSIM_SCENARIOS:-}

# gen NAME SETS...: generate workloads/scenarios/NAME.ini into $work/NAME.trace.
gen() {
  local name=$1; shift
  local sets=()
  if [ "$full" != full ]; then for s in "$@"; do sets+=(--set "$s"); done; fi
  "$cowsim" gen scenario "$dir/$name.ini" "${sets[@]}" -o "$work/$name.trace" 2>"$work/$name.err"
}
replay() {
  "$cowsim" run "$work/$1.trace" --device-size 64G --quiet --csv "$work/$1.csv" 2>"$work/$1.run.err"
}
count() { grep -c "$1" "$work/$2.trace"; }
marks() { awk -F, 'NR > 1 {print $3}' "$work/$1.csv" | grep -c "$2"; }

# --- home directory with mail and nightly backup -----------------------------------
gen home-mail-backup tree.files=1000 scenario.days=8
check "home-mail-backup generates" "[ $? = 0 ]" "$(cat "$work/home-mail-backup.err")"
replay home-mail-backup
check "home-mail-backup replays" "[ $? = 0 ]" "$(cat "$work/home-mail-backup.run.err")"
days=$([ "$full" = full ] && echo 30 || echo 8)
check "home-mail-backup has a row per day" "[ \$(marks home-mail-backup '^day_') = $days ]"
check "home-mail-backup: one snapshot a night, a week kept" \
  "[ \$(count '^snapshot ' home-mail-backup) = $days ] && [ \$(count '^delete-snapshot ' home-mail-backup) = $((days - 7)) ]"
check "home-mail-backup: mutt reads mail and resets atime in the home's Mail/" \
  "grep -q '^read /home/alice/Mail/inbox' \"$work/home-mail-backup.trace\" && grep -q '^settime /home/alice/Mail/' \"$work/home-mail-backup.trace\""
"$cowsim" gen scenario "$dir/home-mail-backup.ini" --set tree.files=1000 --set scenario.days=8 -o "$work/again.trace" 2>/dev/null
[ "$full" = full ] || check "the same scenario file gives the same bytes" "cmp -s \"$work/home-mail-backup.trace\" \"$work/again.trace\""
"$cowsim" gen scenario "$dir/home-mail-backup.ini" --set tree.files=1000 --set scenario.days=8 --seed 2 -o "$work/seed2.trace" 2>/dev/null
check "--seed overrides the file's seed" "! cmp -s \"$work/again.trace\" \"$work/seed2.trace\""

# --- build server with hourly snapshots ---------------------------------------------------
gen build-server tree.files=1000 scenario.days=3
check "build-server generates" "[ $? = 0 ]" "$(cat "$work/build-server.err")"
replay build-server
check "build-server replays" "[ $? = 0 ]" "$(cat "$work/build-server.run.err")"
days=$([ "$full" = full ] && echo 7 || echo 3)
check "build-server: a snapshot every hour, a day of them kept" \
  "[ \$(count '^snapshot ' build-server) = $((days * 24)) ] && [ \$(count '^delete-snapshot ' build-server) = $((days * 24 - 24)) ]"
check "build-server: tmpwatch unlinks objects in obj/ only, compile creates there" \
  "[ \$(count '^unlink /srv/build/obj/' build-server) -gt 0 ] && grep -q '^create /srv/build/obj/compile-' \"$work/build-server.trace\""

# --- a year of snapshot rotation ---------------------------------------------------------
gen year-rotation tree.files=500 scenario.days=100
check "year-rotation generates" "[ $? = 0 ]" "$(cat "$work/year-rotation.err")"
replay year-rotation
check "year-rotation replays" "[ $? = 0 ]" "$(cat "$work/year-rotation.run.err")"
# 100 days from Sunday 2012-01-01: daily 100 (7 kept), weekly on 15 Sundays (4 kept), monthly
# on Jan 1, Feb 1, Mar 1, Apr 1 (all kept); 365 days: 365 (7), 53 (4), 12 (12).
live=$([ "$full" = full ] && echo 23 || echo 15)
check "year-rotation keeps 7 daily, 4 weekly and 12 monthly snapshots" \
  "[ \$((\$(count '^snapshot ' year-rotation) - \$(count '^delete-snapshot ' year-rotation))) = $live ]" \
  "$(count '^snapshot ' year-rotation) snapshots, $(count '^delete-snapshot ' year-rotation) deleted"
check "year-rotation: weekly tar and monthly hsm-scan ran" \
  "grep -q '^# hsm-scan: ' \"$work/year-rotation.trace\" && [ \$(marks year-rotation '^week_') -ge 14 ]"

# --- bad scenario files: FILE:LINE: [group] key: reason, exit 2 -----------------------------
bad() { # NAME EXPECTED_MESSAGE_PART TEXT
  printf '%s\n' "$3" >"$work/$1.ini"
  "$cowsim" gen scenario "$work/$1.ini" -o "$work/$1.trace" 2>"$work/$1.err"
  local status=$?
  check "bad file ($1): exit 2 and '$2'" "[ $status = 2 ] && grep -qF -- \"$2\" \"$work/$1.err\" && [ ! -e \"$work/$1.trace\" ]" \
    "status $status: $(cat "$work/$1.err")"
}
good_tree=$'[tree]\nfiles = 10'
bad schedule "schedule.ini:5: [job s] schedule: 'daly 02:00'" "$good_tree"$'\n[job s]\ntype = snapshot\nschedule = daly 02:00'
bad key "key.ini:5: [job s] keeep: unknown key" "$good_tree"$'\n[job s]\ntype = snapshot\nkeeep = 3\nschedule = daily 02:00'
bad value "value.ini:2: [tree] files: 'ten'" $'[tree]\nfiles = ten'
bad line "line.ini:3: 'files 10' is not" $'[tree]\n# a comment\nfiles 10'
bad twice "twice.ini:3: [tree] files: given twice (first on line 2)" $'[tree]\nfiles = 10\nfiles = 20'
bad type "type.ini:4: [job x] type: 'grep'" "$good_tree"$'\n[job x]\ntype = grep\nschedule = daily 01:00'
bad group "group.ini:3: [jobs x]: unknown group" "$good_tree"$'\n[jobs x]'
bad notree "notree.ini: no [tree] group" $'[scenario]\ndays = 3'
bad missing "missing.ini:3: [job m]: no schedule" "$good_tree"$'\n[job m]\ntype = find'
"$cowsim" gen scenario "$dir/year-rotation.ini" --set 'job daily.keep=-1' -o "$work/set.trace" 2>"$work/set.err"
check "a bad --set value names --set GROUP.KEY" "[ $? = 2 ] && grep -qF 'set job daily.keep: ' \"$work/set.err\"" "$(cat "$work/set.err")"

tap_done

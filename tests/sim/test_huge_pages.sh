#!/usr/bin/env bash
# tests/sim/test_huge_pages.sh COWSIM - cowsim's heap on transparent huge
# pages (sim/huge_pages.h): where the kernel gives them only to those who ask,
# cowsim bench starts itself again with glibc.malloc.hugetlb=1 (HP1) and every
# other command advises its heap itself, starting once (HP2); COWSIM_HUGEPAGES=0
# and a GLIBC_TUNABLES that names the tunable keep it from either; what
# cowsim runs sees the environment the user gave (TAP).
set -u
cowsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # the record checks run it from elsewhere
. "$(dirname "$0")/../tap.sh"

pages() { "$@" bench --sizes 300 --snapshots 1 | tail -1; }
check "COWSIM_HUGEPAGES=0: 4 KiB pages, said so" \
  "[ \"\$(pages env COWSIM_HUGEPAGES=0 \"$cowsim\")\" = 'heap pages: 4KiB (COWSIM_HUGEPAGES=0)' ]"
check "a GLIBC_TUNABLES naming glibc.malloc.hugetlb is the user's choice" \
  "[ \"\$(pages env GLIBC_TUNABLES=glibc.malloc.hugetlb=0 \"$cowsim\")\" = 'heap pages: as GLIBC_TUNABLES says' ]"
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo none)
if [[ $thp == *"[madvise]"* ]]; then
  check "THP [madvise]: cowsim bench restarts with glibc.malloc.hugetlb=1 (HP1)" \
    "[ \"\$(pages env -u GLIBC_TUNABLES -u COWSIM_HUGEPAGES \"$cowsim\")\" = 'heap pages: huge (glibc.malloc.hugetlb=1)' ]"
  if command -v strace >/dev/null; then
    # HP1's restart is an exec of the same process: the same pid, one more execve.
    execs=$(env -u GLIBC_TUNABLES -u COWSIM_HUGEPAGES strace -f -e trace=execve -o "$work/execs" \
      "$cowsim" bench --sizes 300 --snapshots 1 >/dev/null 2>&1; grep -c 'execve(' "$work/execs")
    check "the bench's restart is one more execve of cowsim, no fork" \
      "[ $execs = 2 ] && [ \$(cut -d' ' -f1 \"$work/execs\" | sort -u | wc -l) = 1 ]" "$(cat "$work/execs")"
    # HP2: a run starts once and advises its heap, grown by 32 MiB and more before the model
    # touches it (one madvise of its part above the first 2 MiB boundary).
    printf 'cowsim-trace 1\nmkdir /d\ncreate /d/f size=4096\nread /d/f\n' > "$work/small.trace"
    env -u GLIBC_TUNABLES -u COWSIM_HUGEPAGES strace -f -e trace=execve,madvise -o "$work/run-calls" \
      "$cowsim" run "$work/small.trace" -q --csv "$work/small.csv" >/dev/null 2>&1
    check "cowsim run starts once (HP2)" "[ \$(grep -c 'execve(' \"$work/run-calls\") = 1 ]" "$(cat "$work/run-calls")"
    if ldd "$cowsim" 2>/dev/null | grep -q libasan; then # CI's build-asan: its allocator takes no advice
      skip "cowsim run advises 31 MiB or more of its heap for huge pages (HP2)" "built with ASan"
      skip "the advised heap starts on a huge page's boundary (HP2)" "built with ASan"
    else
      check "cowsim run advises 31 MiB or more of its heap for huge pages (HP2)" \
        "grep 'MADV_HUGEPAGE) = 0' \"$work/run-calls\" | awk -F', ' '\$2 >= 32505856 {ok = 1} END {exit !ok}'" \
        "$(cat "$work/run-calls")"
      # ... from a 2 MiB boundary (glibc wrote its headers below it).
      check "the advised heap starts on a huge page's boundary (HP2)" \
        "grep -qE 'madvise\\(0x[0-9a-f]*[02468ace]00000, [0-9]+, MADV_HUGEPAGE\\) = 0' \"$work/run-calls\"" \
        "$(cat "$work/run-calls")"
    fi
  else
    skip "the bench's restart is one more execve of cowsim, no fork" "no strace"
    skip "cowsim run starts once (HP2)" "no strace"
    skip "cowsim run advises 31 MiB or more of its heap for huge pages (HP2)" "no strace"
    skip "the advised heap starts on a huge page's boundary (HP2)" "no strace"
  fi
else
  skip "THP [madvise]: cowsim bench restarts with glibc.malloc.hugetlb=1 (HP1)" "THP is '$thp' here"
  skip "the bench's restart is one more execve of cowsim, no fork" "THP is '$thp' here"
  skip "cowsim run starts once (HP2)" "THP is '$thp' here"
  skip "cowsim run advises 31 MiB or more of its heap for huge pages (HP2)" "THP is '$thp' here"
  skip "the advised heap starts on a huge page's boundary (HP2)" "THP is '$thp' here"
fi
# COWSIM_HUGEPAGES=0 keeps a run from advising anything.
if command -v strace >/dev/null; then
  printf 'cowsim-trace 1\nmkdir /d\n' > "$work/tiny.trace"
  env COWSIM_HUGEPAGES=0 strace -f -e trace=madvise -o "$work/off-calls" \
    "$cowsim" run "$work/tiny.trace" -q --csv "$work/tiny.csv" >/dev/null 2>&1
  check "COWSIM_HUGEPAGES=0: a run advises no huge pages" "! grep -q MADV_HUGEPAGE \"$work/off-calls\"" \
    "$(cat "$work/off-calls")"
else
  skip "COWSIM_HUGEPAGES=0: a run advises no huge pages" "no strace"
fi
# What cowsim runs gets the environment as the user gave it: cowsim record
# runs a command under strace, and the command writes its environment.
if command -v strace >/dev/null; then
  mkdir -p "$work/tree"
  (cd "$work/tree" && env -u GLIBC_TUNABLES -u COWSIM_HUGEPAGES "$cowsim" record -o "$work/r.trace" -- \
    /bin/sh -c "env > '$work/env-none'") >/dev/null 2>&1
  check "a recorded command sees no GLIBC_TUNABLES when the user gave none" \
    "[ -s \"$work/env-none\" ] && ! grep -qE 'GLIBC_TUNABLES|COWSIM_GLIBC' \"$work/env-none\"" "$(grep TUNABLES "$work/env-none")"
  (cd "$work/tree" && env -u COWSIM_HUGEPAGES GLIBC_TUNABLES=glibc.mem.tagging=0 "$cowsim" record -o "$work/r.trace" -- \
    /bin/sh -c "env > '$work/env-given'") >/dev/null 2>&1
  check "a recorded command sees the user's GLIBC_TUNABLES as given" \
    "[ \"\$(grep -E 'GLIBC_TUNABLES|COWSIM_GLIBC' \"$work/env-given\")\" = 'GLIBC_TUNABLES=glibc.mem.tagging=0' ]" \
    "$(grep TUNABLES "$work/env-given")"
else
  skip "a recorded command sees no GLIBC_TUNABLES when the user gave none" "no strace"
  skip "a recorded command sees the user's GLIBC_TUNABLES as given" "no strace"
fi
tap_done

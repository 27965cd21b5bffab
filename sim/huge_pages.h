/*
 * sim/huge_pages.h - cowsim's heap on transparent huge pages.
 *
 * The model's heap is MiBs to GiBs of small chunks read in no order: at 10^6
 * inodes a read's time goes mostly to TLB and cache misses. Where the kernel
 * gives huge pages only to those who ask ("[madvise]" in
 * /sys/kernel/mm/transparent_hugepage/enabled), cowsim asks, in one of two ways:
 *
 *  HP1 `cowsim bench` starts itself once more with glibc's tunable
 *      glibc.malloc.hugetlb=1 (glibc reads tunables only when a program
 *      starts): glibc then advises every extension of its heap and every
 *      mmap()ed chunk. The bench's goals were measured so (docs/performance.md),
 *      and a second start is nothing next to its seconds.
 *  HP2 every other command advises its heap itself and starts once: a second
 *      start was ~2 ms of a ~125 ms seed run on this VM (issue 20, round 18d).
 *      glibc is told to grow its heap by at least HP_HEAP_PAD at a time, to
 *      serve chunks below 32 MiB from it and to keep up to 64 MiB free at its
 *      top (mallopt: what its dynamic thresholds reach in a long run), and
 *      huge_pages_follow() advises what the heap grew by since it last looked.
 *      What the model touched between a growth and the next look stays on
 *      4 KiB pages. The advised heap starts on a 2 MiB boundary that glibc's
 *      first growth writes nothing above before the advice: on this VM a
 *      4 KiB fault costs ~27 us, a 2 MiB one ~130 us, and those are the
 *      model's first, busiest MiBs. A sanitizer's allocator takes no advice
 *      (mallopt() fails): its heap stays as it is.
 *
 * Neither where nor how outputs are computed changes; peak RSS may, by a huge
 * page's unused part. COWSIM_HUGEPAGES=0, a GLIBC_TUNABLES that names
 * glibc.malloc.hugetlb (the user's choice) and valgrind (its tools would lose
 * the program at an exec, and replace malloc) turn both off.
 */
#ifndef COWSIM_SIM_HUGE_PAGES_H
#define COWSIM_SIM_HUGE_PAGES_H

/* First thing in main(): returns (HP2 set up, the second start of HP1, or no
 * huge pages) or becomes the second start. argv as main() got it. */
void huge_pages_start(char **argv);
/* HP2: advise what the heap grew by since the last call; a compare when it did
 * not grow or HP2 is off. A replay calls it every 64 ops (replay.c RP12). */
void huge_pages_follow(void);
/* What the heap runs on, a few words for the bench's provenance:
 * "huge (glibc.malloc.hugetlb=1)", "4KiB (COWSIM_HUGEPAGES=0)", ... */
const char *huge_pages_state(void);

#endif

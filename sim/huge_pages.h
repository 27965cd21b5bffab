/*
 * sim/huge_pages.h - cowsim's heap on transparent huge pages.
 *
 * The model's heap is hundreds of MiB of small chunks read in no order: at
 * 10^6 inodes a read's time goes mostly to TLB and cache misses. glibc backs
 * its heap with transparent huge pages when the tunable glibc.malloc.hugetlb=1
 * asks for them (madvise(MADV_HUGEPAGE) on each extension of the heap), and
 * it reads tunables only when a program starts: so cowsim starts itself once
 * more with it (see huge_pages.c for when it does not). Outputs do not change;
 * peak RSS may, by a huge page's unused part.
 */
#ifndef COWSIM_SIM_HUGE_PAGES_H
#define COWSIM_SIM_HUGE_PAGES_H

/* First thing in main(): returns (the second start, or no restart) or
 * becomes the second start. argv as main() got it. */
void huge_pages_restart(char **argv);
/* What the heap runs on, a few words for the bench's provenance:
 * "huge (glibc.malloc.hugetlb=1)", "4KiB (COWSIM_HUGEPAGES=0)", ... */
const char *huge_pages_state(void);

#endif

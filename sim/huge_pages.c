/*
 * sim/huge_pages.c - cowsim's heap on transparent huge pages (huge_pages.h,
 * HP1-HP2).
 *
 * HP1's second start puts GLIBC_TUNABLES back as it was, so that what cowsim
 * runs (python3 for a plot, strace and a recorded program, cowsim for a
 * sweep) sees the environment the user gave.
 *
 * HP2's heap, with glibc growing it by HP_HEAP_PAD and more at a time:
 *
 *   heap start                advised_end           brk = sbrk(0)
 *   |---- advised: huge pages ----|-- grown since: 4 KiB until advised --|
 *                                  huge_pages_follow() advises this part
 *
 * The kernel backs a 2 MiB-aligned range with a huge page on its first touch
 * only when the whole range is in one advised mapping, which is why the heap
 * grows by whole MiBs at a time (the brk the kernel extends is a new mapping
 * until advised: it merges with the advised one then).
 */
#include "huge_pages.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TUNABLE "glibc.malloc.hugetlb=1"
/* Set only between HP1's two starts: GLIBC_TUNABLES before ("" for none). */
#define TUNABLES_BEFORE "COWSIM_GLIBC_TUNABLES_BEFORE"
/* HP2: the least the heap grows by; chunks from this size up get their own
 * mapping (glibc's largest dynamic mmap threshold); free bytes kept at the
 * heap's top before it shrinks (twice that, as glibc's dynamic trim threshold). */
#define HP_HEAP_PAD (32 << 20)
#define HP_MMAP_THRESHOLD (32 << 20)
#define HP_TRIM_THRESHOLD (64 << 20)
#define HP_BELOW_BOUNDARY ((uintptr_t)64 << 10) /* room for glibc's headers below it */
#define HP_HUGE_PAGE ((uintptr_t)2 << 20) /* x86-64's PMD */

static const char *state = "4KiB (no THP to ask for)";
static bool following;       /* HP2 is on */
static uintptr_t advised_end; /* the heap below it is advised */

static bool thp_only_when_asked(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	if (!f)
		return false;
	bool read = fgets(mode, sizeof(mode), f) != NULL;
	fclose(f);
	if (read && strstr(mode, "[always]"))
		state = "huge (THP always)";
	return read && strstr(mode, "[madvise]");
}

static void put_back(const char *tunables)
{
	if (tunables && *tunables)
		setenv("GLIBC_TUNABLES", tunables, 1);
	else
		unsetenv("GLIBC_TUNABLES");
}

/* Whether to ask at all: false when the user or the tools said no, or THP needs no asking. */
static bool may_ask(void)
{
	const char *opt_out = getenv("COWSIM_HUGEPAGES");
	const char *tunables = getenv("GLIBC_TUNABLES");
	const char *preload = getenv("LD_PRELOAD");
	if (opt_out && !strcmp(opt_out, "0")) {
		state = "4KiB (COWSIM_HUGEPAGES=0)";
		return false;
	}
	if (tunables && strstr(tunables, "glibc.malloc.hugetlb")) {
		state = "as GLIBC_TUNABLES says";
		return false;
	}
	if (preload && strstr(preload, "vgpreload")) {
		state = "4KiB (under valgrind)";
		return false;
	}
	return thp_only_when_asked();
}

/* HP1: the second start, with the tunable; returns only when the exec failed. */
static void restart_with_tunable(char **argv)
{
	const char *tunables = getenv("GLIBC_TUNABLES");
	char value[4096];
	int n = tunables && *tunables ? snprintf(value, sizeof(value), "%s:" TUNABLE, tunables)
				      : snprintf(value, sizeof(value), TUNABLE);
	if (n < 0 || (size_t)n >= sizeof(value) || setenv(TUNABLES_BEFORE, tunables ? tunables : "", 1))
		return;
	if (!setenv("GLIBC_TUNABLES", value, 1))
		execv("/proc/self/exe", argv);
	put_back(tunables); /* no second start: go on as we are */
	unsetenv(TUNABLES_BEFORE);
}

/* HP2: the heap goes on from just below a huge page's boundary A:
 *
 *   old top   gap (never touched)   A - 64 KiB                  A                          brk
 *   |------|--------------------|-- glibc's headers, 4 KiB --|---- advised before any touch ----|
 *
 * The kernel puts a 2 MiB range on 4 KiB pages when one page of it is touched before it is
 * advised (the page table is there then), and on this VM a 4 KiB fault costs ~27 us against
 * ~130 us for a whole huge page (perf18mem, issue 20): the model's first MiBs, its busiest,
 * were such a range. glibc takes a break it did not set as another program's (a "foreign
 * sbrk") and starts its new top there; with the old top taken, one malloc makes it grow by
 * HP_HEAP_PAD and more, writing its headers only below A. */
static void follow_heap(void)
{
	if (!mallopt(M_TOP_PAD, HP_HEAP_PAD) || !mallopt(M_MMAP_THRESHOLD, HP_MMAP_THRESHOLD) ||
	    !mallopt(M_TRIM_THRESHOLD, HP_TRIM_THRESHOLD))
		return;
	/* The old top, taken all but a few bytes, serves no more: the next malloc grows the heap.
	 * volatile: a compiler may drop a malloc() freed unused. */
	size_t old_top = mallinfo2().keepcost;
	void *volatile old = old_top > 256 ? malloc(old_top - 128) : NULL;
	uintptr_t now = (uintptr_t)sbrk(0);
	uintptr_t boundary = (now + HP_BELOW_BOUNDARY + HP_HUGE_PAGE - 1) & ~(HP_HUGE_PAGE - 1);
	if (sbrk((intptr_t)(boundary - HP_BELOW_BOUNDARY - now)) == (void *)-1) {
		free(old);
		return;
	}
	void *volatile grow = malloc(HP_BELOW_BOUNDARY / 2); /* the growth; freed into the new top */
	free(grow);
	free(old);
	advised_end = boundary;
	following = true;
	state = "huge (the heap advised as it grows)";
	huge_pages_follow();
}

void huge_pages_start(char **argv)
{
	const char *before = getenv(TUNABLES_BEFORE);
	if (before) { /* HP1's second start: glibc has read the tunable */
		state = "huge (glibc.malloc.hugetlb=1)";
		put_back(before);
		unsetenv(TUNABLES_BEFORE);
		return;
	}
	if (!may_ask())
		return;
	if (argv[0] && argv[1] && !strcmp(argv[1], "bench"))
		restart_with_tunable(argv);
	else
		follow_heap();
}

void huge_pages_follow(void)
{
	if (!following)
		return;
	uintptr_t brk_now = (uintptr_t)sbrk(0);
	if (brk_now <= advised_end)
		return;
	uintptr_t from = advised_end & ~(uintptr_t)4095; /* madvise() starts at a page */
	if (!madvise((void *)from, brk_now - from, MADV_HUGEPAGE))
		advised_end = brk_now;
}

const char *huge_pages_state(void)
{
	return state;
}

/*
 * sim/huge_pages.c - cowsim's heap on transparent huge pages (huge_pages.h).
 *
 * The restart happens only where the kernel gives huge pages to those who
 * ask ("[madvise]" in /sys/kernel/mm/transparent_hugepage/enabled: "always"
 * needs no asking, "never" gives none), and not when GLIBC_TUNABLES already
 * names the tunable (the user's choice), under valgrind (its tools would lose
 * the program at the exec) or with COWSIM_HUGEPAGES=0. The second start puts
 * GLIBC_TUNABLES back as it was, so that what cowsim runs (python3 for a
 * plot, strace and a recorded program, cowsim for a sweep) sees the
 * environment the user gave.
 */
#include "huge_pages.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNABLE "glibc.malloc.hugetlb=1"
/* Set only between the two starts: GLIBC_TUNABLES before ("" for none). */
#define TUNABLES_BEFORE "COWSIM_GLIBC_TUNABLES_BEFORE"

static const char *state = "4KiB (no THP to ask for)";

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

void huge_pages_restart(char **argv)
{
	const char *before = getenv(TUNABLES_BEFORE);
	if (before) { /* the second start: glibc has read the tunable */
		state = "huge (glibc.malloc.hugetlb=1)";
		put_back(before);
		unsetenv(TUNABLES_BEFORE);
		return;
	}
	const char *opt_out = getenv("COWSIM_HUGEPAGES");
	const char *tunables = getenv("GLIBC_TUNABLES");
	const char *preload = getenv("LD_PRELOAD");
	if (opt_out && !strcmp(opt_out, "0")) {
		state = "4KiB (COWSIM_HUGEPAGES=0)";
		return;
	}
	if (tunables && strstr(tunables, "glibc.malloc.hugetlb")) {
		state = "as GLIBC_TUNABLES says";
		return;
	}
	if (preload && strstr(preload, "vgpreload")) {
		state = "4KiB (under valgrind)";
		return;
	}
	if (!thp_only_when_asked())
		return;
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

const char *huge_pages_state(void)
{
	return state;
}

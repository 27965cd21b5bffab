/*
 * tests/reliability/memcheck_leak.c - the negative control of
 * test_memcheck.sh: a program that loses one block, so that the test can show
 * that its valgrind command line reports a definite leak as an error (status
 * 99) rather than passing whatever it runs.
 *
 * The pointer goes through a volatile so that the compiler cannot drop the
 * malloc(); its only copy is overwritten, so the block is definitely lost.
 */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

int main(void)
{
	sink = malloc(64);
	if (!sink)
		return 1;
	sink = NULL;
	puts("memcheck-leak: lost 64 bytes");
	return 0;
}

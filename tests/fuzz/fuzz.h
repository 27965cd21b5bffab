/*
 * tests/fuzz/fuzz.h - the entry point every cowsim fuzz harness defines.
 *
 * Each harness (fuzz_trace.c, fuzz_run.c) is one LLVMFuzzerTestOneInput()
 * that aborts on any broken contract, so the same file links two ways:
 *   - with -fsanitize=fuzzer (tools/fuzz.sh): libFuzzer supplies main() and
 *     mutates inputs;
 *   - with replay_corpus.c (meson): a plain main() feeds it every file of
 *     the kept corpus and every fixed crasher, so `meson test` replays them
 *     with gcc, and under ASan+UBSan in CI.
 */
#ifndef COWSIM_TESTS_FUZZ_H
#define COWSIM_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print "fuzz: broken contract: WHY" on stderr and abort(): libFuzzer then
 * saves the input as a crasher. */
#define FUZZ_REQUIRE(cond, ...)                                                          \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz: broken contract (%s): ", #cond);          \
			fprintf(stderr, __VA_ARGS__);                                    \
			fputc('\n', stderr);                                             \
			abort();                                                         \
		}                                                                        \
	} while (0)

#endif

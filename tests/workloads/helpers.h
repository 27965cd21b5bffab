/*
 * tests/workloads/helpers.h - small helpers shared by the workloads tests:
 * traces held in memory, written with trace_writer and read back.
 */
#ifndef COWSIM_TESTS_WORKLOADS_HELPERS_H
#define COWSIM_TESTS_WORKLOADS_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib.h>

#include "trace.h"

/* A reader over TEXT (copied), named "t.trace" in messages; NULL + error on a header error. */
struct trace_reader *helper_reader(const char *text, GError **error);

/* The trace text the writer produces for OP (header included). */
char *helper_write_op(const struct trace_op *op);

/* Parse TEXT and expect failure; returns the error message (caller frees). */
char *helper_first_error(const char *text);

/* Run the scenario NAME with ARGS (NULL-terminated) into a string; NULL + error on failure. */
char *helper_generate(const char *name, const char *const *args, GError **error);

#endif

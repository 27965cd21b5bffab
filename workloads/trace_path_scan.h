/*
 * workloads/trace_path_scan.h - the reader's path scan (trace.c, TR6), inline in its hot loop.
 * Private to workloads/.
 *
 * A line "KEYWORD PATH ..." of a grep or a find names a path that shares most of its bytes with the
 * path of the line before.  The scan compares the two sixteen bytes a block up to where they
 * differ, then checks the rest for both rules at once: the bytes an unquoted token may hold (the
 * lexer's) and a good path (TO1), finding where the path ends on the way.  Every function here is
 * static inline, so that the reader's fast path calls nothing and saves no registers.
 */
#ifndef COWSIM_WORKLOADS_TRACE_PATH_SCAN_H
#define COWSIM_WORKLOADS_TRACE_PATH_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <glib.h>

#include "trace.h"

/* Bytes of a path the fast path takes: those an unquoted token may hold (the lexer's rule, trace.c
 * plain_byte) but '=', which makes the token an option (trace.c is_option_token). */
static inline bool path_byte(unsigned char c)
{
	return c > ' ' && c != '"' && c != '\\' && c != 0x7f && c != '=';
}

/* The classes of the 16 bytes at S that the path scan wants, one bit a byte (bit i for S[i]). */
struct block_classes {
	uint32_t stop;    /* not a path byte: the first one ends the path */
	uint32_t suspect; /* a '/' followed by a '/', a '.' or a stop byte, or in the block's last byte
			   * (whose follower the block does not hold): only these can start a bad
			   * component */
};

#if defined(__SSE2__)
/* SSE2 (every x86-64 has it): a compare a class; the follower of each byte by a byte shift. */
static inline struct block_classes classify_block(const char *s)
{
	__m128i x = _mm_loadu_si128((const __m128i *)s);
	__m128i low = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(' ')), x); /* unsigned x <= ' ' */
	__m128i quote = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
	__m128i backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
	__m128i del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
	__m128i equals = _mm_cmpeq_epi8(x, _mm_set1_epi8('='));
	__m128i stop = _mm_or_si128(_mm_or_si128(low, quote), _mm_or_si128(_mm_or_si128(backslash, del), equals));
	__m128i slash = _mm_cmpeq_epi8(x, _mm_set1_epi8('/'));
	__m128i ends = _mm_or_si128(_mm_or_si128(slash, stop), _mm_cmpeq_epi8(x, _mm_set1_epi8('.')));
	__m128i follower = _mm_or_si128(_mm_srli_si128(ends, 1), _mm_set_epi8(-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	return (struct block_classes){
		.stop = (uint32_t)_mm_movemask_epi8(stop),
		.suspect = (uint32_t)_mm_movemask_epi8(_mm_and_si128(slash, follower)),
	};
}
#else
static inline struct block_classes classify_block(const char *s)
{
	struct block_classes c = { 0 };
	for (unsigned i = 0; i < 16; i++) {
		unsigned char b = (unsigned char)s[i], next = i < 15 ? (unsigned char)s[i + 1] : '/';
		c.stop |= (uint32_t)!path_byte(b) << i;
		c.suspect |= (uint32_t)(b == '/' && (next == '/' || next == '.' || !path_byte(next))) << i;
	}
	return c;
}
#endif

/* The byte C ends a component: a '/', or the first byte past the path. */
static inline bool ends_component(unsigned char c)
{
	return c == '/' || !path_byte(c);
}

/* True when the component after the '/' at S is empty, "." or "..".  S[1..3] are read only up to the
 * first byte that ends it, so never past the path's end. */
static inline bool special_after_slash(const unsigned char *s)
{
	if (ends_component(s[1]))
		return true;
	if (s[1] != '.')
		return false;
	if (ends_component(s[2]))
		return true;
	return s[2] == '.' && ends_component(s[3]);
}

/* How many leading bytes of A equal B's, at most N.  Both are read in whole blocks up to the first
 * block that differs or reaches N: up to 15 bytes past the first difference, or past N. */
static inline size_t shared_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;
#if defined(__SSE2__)
	for (; i < n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(a + i)), y = _mm_loadu_si128((const __m128i *)(b + i));
		uint32_t differ = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xffff;
		if (differ)
			return MIN(i + (size_t)__builtin_ctz(differ), n);
	}
	return n;
#else
	for (; i < n && a[i] == b[i]; i++)
		;
	return i;
#endif
}

/* One pass over S, sixteen bytes a block, for both rules: path bytes (path_byte) and a good path
 * (at most 256 bytes, so no component passes 255; absolute; no empty, "." or ".." component).
 * The first byte that is not a path byte ends the path; the scan finds it, so the bytes are read
 * once.  Only a slash followed by a slash, a dot or the end can start a bad component: those few
 * (and a slash in a block's last byte, whose follower the block does not hold) are looked at.
 *
 * KNOWN: a slash at p decides with the bytes up to p + 3 (special_after_slash), so the pass may
 * start at byte KNOWN - 3: every slash before it, and every byte, is the same as in the path
 * accepted before.  A grep or a find names paths in tree order: most of each path is its
 * predecessor's, and the rest (11 bytes on average in the seed experiment) is mostly one block.
 * The blocks are not aligned to S: they start where the pass starts. */
static inline size_t plain_path_span(const char *s, size_t known)
{
	if (s[0] != '/')
		return 0;
	for (size_t base = known > 3 ? known - 3 : 0; base <= TRACE_NAME_MAX + 1; base += 16) {
		struct block_classes c = classify_block(s + base);
		uint32_t before_end = c.stop ? (c.stop & (0 - c.stop)) - 1 : UINT32_MAX;
		for (uint32_t suspects = c.suspect & before_end; suspects; suspects &= suspects - 1)
			if (special_after_slash((const unsigned char *)s + base + (size_t)__builtin_ctz(suspects)))
				return 0;
		if (c.stop) {
			size_t len = base + (size_t)__builtin_ctz(c.stop);
			return len <= TRACE_NAME_MAX + 1 ? len : 0;
		}
	}
	return 0;
}

/* The length of the path at S when it is certainly an unquoted token holding a good path (TO1):
 * plain bytes (no blank, control byte, '"', '\\' or 0x7f) and no '=' (which makes a token an
 * option), up to the first byte that is not one of them, which ends it; at most TRACE_NAME_MAX + 1
 * bytes.  0 is no verdict: the caller lexes the line in full.  LAST (LAST_LEN bytes) is a path this
 * function accepted before, NUL-terminated: the bytes S shares with it are not checked again, only
 * the components they may end.  S and LAST must be readable up to 15 bytes past the first byte
 * that differs or ends them (the reader's sentinel and padding, TR5).  *SHARED: how many leading
 * bytes S shares with LAST (at most LAST_LEN, and no more than S's path: the byte that ends it is
 * none of LAST's path bytes). */
static inline size_t trace_plain_path_after(const char *s, const char *last, size_t last_len, size_t *shared)
{
	*shared = shared_prefix(s, last, last_len);
	return plain_path_span(s, *shared);
}

#endif

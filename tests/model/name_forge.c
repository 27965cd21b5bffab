/*
 * tests/model/name_forge.c - names of a chosen btrfs name hash (name_forge.h).
 */
#include "name_forge.h"

#include <string.h>

#include <glib.h>

#include "fs_internal.h"

/* A name of `prefix` and four more bytes whose fs_name_hash() is `hash`, or
 * false when those bytes hold a NUL or a '/'. The hash is the raw reflected
 * crc32c state; every table entry has its own top byte, so the last four
 * steps run backwards from `hash` give the four table indexes, and the
 * bytes follow forwards from the prefix's state. */
bool name_of_hash(char *out, const char *prefix, uint32_t hash)
{
	uint32_t table[256];
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table[i] = c;
	}
	uint8_t index[4] = { 0 };
	uint32_t state = hash;
	for (int step = 3; step >= 0; step--) {
		for (uint32_t i = 0; i < 256; i++)
			if (table[i] >> 24 == state >> 24)
				index[step] = (uint8_t)i;
		state = (state ^ table[index[step]]) << 8;
	}
	size_t length = strlen(prefix);
	memcpy(out, prefix, length);
	uint32_t crc = fs_name_hash(prefix, length);
	for (int step = 0; step < 4; step++) {
		uint8_t byte = (uint8_t)((crc ^ index[step]) & 0xff);
		if (!byte || byte == '/')
			return false;
		out[length + (size_t)step] = (char)byte;
		crc = table[index[step]] ^ (crc >> 8);
	}
	out[length + 4] = '\0';
	return fs_name_hash(out, length + 4) == hash;
}

void names_of_hash(char (*names)[16], int n, char prefix, uint32_t hash)
{
	char from[16];
	for (int i = 0, k = 0; i < n; k++) {
		g_snprintf(from, sizeof(from), "%c%d", prefix, k);
		if (name_of_hash(names[i], from, hash))
			i++;
	}
}

/*
 * tests/model/name_forge.h - names of a chosen btrfs name hash, for tests.
 *
 * btrfs keys a DIR_ITEM by the crc32c of its name; names that collide sit
 * one past another (model/fs.h FS_DIR_HASH_PROBE). The tests of collisions,
 * in the model (test_fs.c) and through a trace (tests/sim), need many names
 * of one hash: crc32c is linear, so four bytes after any prefix reach it.
 */
#ifndef COWSIM_TESTS_NAME_FORGE_H
#define COWSIM_TESTS_NAME_FORGE_H

#include <stdbool.h>
#include <stdint.h>

/* out (at least strlen(prefix) + 5 bytes) = prefix and four bytes whose
 * name hash is `hash`; false when those bytes would hold a NUL or a '/'. */
bool name_of_hash(char *out, const char *prefix, uint32_t hash);
/* n names of one hash, each a prefix ("c0", "c1", ...) and four bytes. */
void names_of_hash(char (*names)[16], int n, char prefix, uint32_t hash);

#endif

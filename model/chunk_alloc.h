/*
 * model/chunk_alloc.h - how big a chunk (block group) btrfs makes.
 *
 * Two allocators size chunks, and they disagree:
 *
 *   mkfs (btrfs-progs)    data 8 MiB, system 8 MiB, metadata: the profile's
 *                         maximum (256 MiB, 1 GiB above 50 GiB) when a tenth
 *                         of the device reaches it, else half a tenth of the
 *                         device (DUP halves it), at least 32 MiB.
 *   the kernel (volumes.c  a chunk is at most 10 % of the writable space,
 *   decide_stripe_size)   rounded *up* to 16 MiB, at most the space_info's
 *                         chunk_size (data 1 GiB stripes, metadata 256 MiB /
 *                         1 GiB above 50 GiB), and at most what the device
 *                         still has unallocated (rounded down to 64 KiB).
 *
 * Measured with mkfs.btrfs 6.2 / kernel 6.18 on loop devices from 256 MiB to
 * 64 GiB: docs/btrfs-ground-truth.md, "Chunk sizes". Pure functions: no state.
 *
 * Invariants:
 *  CA1 a chunk's logical length is a multiple of 64 KiB and its raw cost
 *      (twice for DUP) never exceeds the unallocated raw bytes it was sized from;
 *  CA2 chunk_alloc_size() returns 0 exactly when less than the minimum device
 *      extent (64 KiB per stripe) is unallocated.
 */
#ifndef COWSIM_CHUNK_ALLOC_H
#define COWSIM_CHUNK_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

/* The metadata chunk mkfs.btrfs makes for a device of `device_size` bytes. */
uint64_t chunk_alloc_mkfs_metadata(uint64_t device_size);

/* The logical length of the next chunk the kernel allocates: `data` or
 * metadata, `dup` when each logical byte takes two raw bytes, given the raw
 * bytes still `unallocated`. 0 when nothing fits (CA2). */
uint64_t chunk_alloc_size(uint64_t device_size, bool data, bool dup, uint64_t unallocated);

/* The logical bytes all chunks of that kind the device can still take would
 * hold: what the overcommit and the threshold policy count as allocatable. */
uint64_t chunk_alloc_allocatable(bool dup, uint64_t unallocated);

#endif

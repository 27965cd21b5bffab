/*
 * workloads/tracegen_rng.c - xoshiro256** (Blackman and Vigna, 2018) and the
 * few distributions the generators draw from.  See tracegen_rng.h for why
 * the generator is our own.
 *
 * Invariant: the state is never all zero (splitmix64 cannot produce four
 * zero words from one seed), which xoshiro requires.
 */
#include "tracegen_rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void tracegen_rng_seed(struct tracegen_rng *rng, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

void tracegen_rng_seed_stream(struct tracegen_rng *rng, uint64_t seed, uint64_t stream)
{
	uint64_t x = stream;
	tracegen_rng_seed(rng, seed ^ splitmix64(&x));
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t tracegen_rng_next(struct tracegen_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t tracegen_rng_below(struct tracegen_rng *rng, uint64_t n)
{
	/* Reject the top partial copy of [0, n) so every value is equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = tracegen_rng_next(rng);
	while (x >= limit);
	return x % n;
}

double tracegen_rng_unit(struct tracegen_rng *rng)
{
	return (double)(tracegen_rng_next(rng) >> 11) * 0x1.0p-53;
}

double tracegen_rng_normal(struct tracegen_rng *rng)
{
	double u1 = 1.0 - tracegen_rng_unit(rng); /* (0, 1]: log() stays finite */
	double u2 = tracegen_rng_unit(rng);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double tracegen_rng_lognormal(struct tracegen_rng *rng, double mu, double sigma)
{
	return exp(mu + sigma * tracegen_rng_normal(rng));
}

double tracegen_rng_pareto(struct tracegen_rng *rng, double k, double xm)
{
	return xm / pow(1.0 - tracegen_rng_unit(rng), 1.0 / k);
}

double tracegen_rng_exponential(struct tracegen_rng *rng, double mean)
{
	return -mean * log(1.0 - tracegen_rng_unit(rng));
}

uint64_t tracegen_rng_poisson(struct tracegen_rng *rng, double lambda)
{
	if (lambda <= 0)
		return 0;
	if (lambda > 30) {
		double x = floor(lambda + sqrt(lambda) * tracegen_rng_normal(rng) + 0.5);
		return x < 0 ? 0 : (uint64_t)x;
	}
	double limit = exp(-lambda), p = 1.0;
	uint64_t k = 0;
	do {
		k++;
		p *= tracegen_rng_unit(rng);
	} while (p > limit);
	return k - 1;
}

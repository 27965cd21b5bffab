/*
 * workloads/tracegen_rng.h - the generators' random numbers.
 *
 * xoshiro256** seeded through splitmix64 from the --seed value: a generator
 * of our own rather than GRand or rand(), so the same seed gives the same
 * trace bytes whatever the libc or GLib version (TG1).  Never seeded from the
 * clock.  Continuous draws (normal, lognormal) go through libm's log/cos;
 * integers derived from them are the same wherever libm rounds the same
 * (every glibc we know of).
 */
#ifndef COWSIM_WORKLOADS_TRACEGEN_RNG_H
#define COWSIM_WORKLOADS_TRACEGEN_RNG_H

#include <stdint.h>

struct tracegen_rng {
	uint64_t s[4];
};

void tracegen_rng_seed(struct tracegen_rng *rng, uint64_t seed);
/* A derived, independent stream: the same (seed, stream) always gives the same numbers. */
void tracegen_rng_seed_stream(struct tracegen_rng *rng, uint64_t seed, uint64_t stream);

uint64_t tracegen_rng_next(struct tracegen_rng *rng);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t tracegen_rng_below(struct tracegen_rng *rng, uint64_t n);
/* Uniform in [0, 1). */
double tracegen_rng_unit(struct tracegen_rng *rng);
/* Standard normal (Box-Muller). */
double tracegen_rng_normal(struct tracegen_rng *rng);
double tracegen_rng_lognormal(struct tracegen_rng *rng, double mu, double sigma);
/* Pareto with shape k and scale xm (>= xm). */
double tracegen_rng_pareto(struct tracegen_rng *rng, double k, double xm);
/* Exponential with the given mean. */
double tracegen_rng_exponential(struct tracegen_rng *rng, double mean);
/* Poisson with mean lambda (Knuth for small lambda, normal approximation above 30). */
uint64_t tracegen_rng_poisson(struct tracegen_rng *rng, double lambda);

#endif

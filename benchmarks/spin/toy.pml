/* The toy of benchmarks/bench_engine.py in Promela (issue 56, benchmarks/bench_spin.py):
   four counters in 0..K-1 starting at (0,0,0,0); each step moves one counter up by 1 or 2
   (mod K), and the engine's invariant (the counters' sum is nonnegative) is asserted after
   every step. One process whose pc stays at the loop's head, so the states SPIN stores are
   exactly the K^4 counter vectors. Set K with: spin -DK=40 -a toy.pml */
#ifndef K
#define K 40
#endif

byte c[4];

#define STEP(i, d) d_step { c[i] = (c[i] + d) % K; assert(c[0] + c[1] + c[2] + c[3] >= 0) }

active proctype toy()
{
	do
	:: STEP(0, 1)
	:: STEP(0, 2)
	:: STEP(1, 1)
	:: STEP(1, 2)
	:: STEP(2, 1)
	:: STEP(2, 2)
	:: STEP(3, 1)
	:: STEP(3, 2)
	od
}

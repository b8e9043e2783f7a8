/** The simulated cluster moved to src/verify/cluster-sim.ts (`skiff verify` drives it); tests import it from here. */
export * from '../../src/verify/cluster-sim';

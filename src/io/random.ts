/**
 * Seeded randomness: xoshiro128** (Blackman and Vigna, 2018; 128-bit state, period 2^128 - 1) seeded
 * through splitmix32. The simulation seeds it from the run's seed so a run replays; production seeds
 * it from the OS (crypto) so topic IDs and member ids are unpredictable, yet the code path is the same.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';

/** A seeded random source in production too (seeded from the OS), so simulations replay. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, maxExclusive). */
  int(maxExclusive: number): number;
  /** 16 random bytes (UUIDs: topic IDs, cluster id, member ids). */
  bytes16(): Buffer;
}

const TWO_POW_32 = 0x1_0000_0000;

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** splitmix32 step: turns one 32-bit seed word into a stream of well-mixed words (seeding only). */
function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** xoshiro128** as a {@link Random}. Not cryptographic: do not derive secrets from it. */
export class Xoshiro128 implements Random {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /**
   * @param seed a number (any safe integer; both 32-bit halves are used) or at least 16 bytes (used as
   *   the state directly, e.g. from crypto). An all-zero state is invalid and is replaced.
   */
  constructor(seed: number | Uint8Array) {
    if (typeof seed === 'number') {
      assert(Number.isSafeInteger(seed), `seed must be a safe integer, got ${seed}`);
      const mix = { s: (seed >>> 0) ^ Math.imul(Math.floor(seed / TWO_POW_32) | 0, 0x27d4eb2d) };
      this.s0 = splitmix32(mix);
      this.s1 = splitmix32(mix);
      this.s2 = splitmix32(mix);
      this.s3 = splitmix32(mix);
    } else {
      assert(seed.byteLength >= 16, `seed needs 16 bytes, got ${seed.byteLength}`);
      const view = new DataView(seed.buffer, seed.byteOffset, 16);
      this.s0 = view.getUint32(0);
      this.s1 = view.getUint32(4);
      this.s2 = view.getUint32(8);
      this.s3 = view.getUint32(12);
    }
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 0x9e3779b9;
  }

  /** The next 32-bit unsigned integer of the stream. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** A float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return this.nextUint32() / TWO_POW_32;
  }

  /** An integer in [0, maxExclusive); `maxExclusive` must be an integer in [1, 2^32]. */
  int(maxExclusive: number): number {
    assert(
      Number.isInteger(maxExclusive) && maxExclusive >= 1 && maxExclusive <= TWO_POW_32,
      `int(maxExclusive) needs an integer in [1, 2^32], got ${maxExclusive}`,
    );
    return Math.floor(this.next() * maxExclusive);
  }

  /** 16 bytes from the stream (topic IDs, cluster id, member ids). */
  bytes16(): Buffer {
    const out = Buffer.allocUnsafe(16);
    for (let i = 0; i < 16; i += 4) out.writeUInt32BE(this.nextUint32(), i);
    return out;
  }
}

/** A deterministic {@link Random} for the simulation and tests. */
export function createSeededRandom(seed: number): Xoshiro128 {
  return new Xoshiro128(seed);
}

/** The production {@link Random}: the same generator, seeded with 16 bytes from the OS. */
export function createSystemRandom(): Xoshiro128 {
  return new Xoshiro128(randomBytes(16));
}

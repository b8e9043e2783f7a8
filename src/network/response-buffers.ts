/**
 * Reusable buffers for the large chunks of responses: the record bytes the network thread reads from
 * segments for a Fetch (segment-reader.ts). A response's chunk leased here goes back to the pool once
 * the socket has taken it (connection.ts passes a write callback for such chunks), so a consumer
 * reading at hundreds of MB/s reuses a few buffers instead of allocating one per partition per fetch.
 *
 * Why: each fresh buffer is external memory to V8. Fetch buffers live until the socket has written
 * them, long enough to survive a scavenge, so they were freed only by full mark-compacts, and V8
 * starts one for every 64 MiB of external memory allocated: the network thread's isolate ran one
 * every 50-100 ms while a consumer read (docs/design-notes.md, "Data path: copies and hops").
 *
 * Sizes are rounded up to a power of two from {@link MIN_POOLED_BYTES} to {@link MAX_POOLED_BYTES};
 * outside that range a lease is a plain allocation and its release does nothing. The pool keeps at
 * most {@link MAX_FREE_BYTES} of free buffers. A leased buffer that is never released (a response
 * dropped with its connection, a record set trimmed to a sub-range) is simply collected.
 */

/** Leases below this size are plain allocations (bytes). */
export const MIN_POOLED_BYTES = 64 * 1024;
/** Leases above this size are plain allocations (bytes). */
export const MAX_POOLED_BYTES = 8 * 1024 * 1024;
/** Free buffers kept at most, in bytes over all sizes. */
export const MAX_FREE_BYTES = 32 * 1024 * 1024;

/** A pool of response buffers (module comment); one per thread ({@link responseBuffers}). */
export class ResponseBufferPool {
  /** Free whole buffers by their size (a power of two). */
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  /** Each leased view to the whole pooled buffer behind it. */
  private readonly leased = new WeakMap<Buffer, Buffer>();

  /**
   * A buffer of exactly `size` bytes, uninitialised. Hand it back with {@link release} once nothing
   * reads or writes it any more (a socket write's callback); until then the pool never lends it again.
   */
  lease(size: number): Buffer {
    if (size < MIN_POOLED_BYTES || size > MAX_POOLED_BYTES) return Buffer.allocUnsafeSlow(size);
    const classBytes = 2 ** Math.ceil(Math.log2(size));
    const whole = this.free.get(classBytes)?.pop();
    if (whole !== undefined) this.freeBytes -= classBytes;
    const backing = whole ?? Buffer.allocUnsafeSlow(classBytes);
    const view = backing.subarray(0, size);
    this.leased.set(view, backing);
    return view;
  }

  /** Whether `chunk` is a lease not yet released. */
  isLeased(chunk: Buffer): boolean {
    return this.leased.has(chunk);
  }

  /** Gives back a buffer {@link lease} returned. Any other buffer, or a second release, is ignored. */
  release(chunk: Buffer): void {
    const backing = this.leased.get(chunk);
    if (backing === undefined) return;
    this.leased.delete(chunk);
    if (this.freeBytes + backing.length > MAX_FREE_BYTES) return;
    const list = this.free.get(backing.length);
    if (list === undefined) this.free.set(backing.length, [backing]);
    else list.push(backing);
    this.freeBytes += backing.length;
  }

  /** Bytes of free buffers held (tests). */
  freeBytesHeld(): number {
    return this.freeBytes;
  }
}

/** This thread's pool: the segment reader leases from it, the connection releases to it. */
export const responseBuffers = new ResponseBufferPool();

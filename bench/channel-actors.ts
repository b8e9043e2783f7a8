/**
 * Actors of the cross-worker channel benchmark (bench/runtime-channels.ts). Compiled to
 * dist/bench/channel-actors.js and registered by absolute path, so workers load them themselves.
 */
import { actorRef } from '../src/runtime/actor';
import type { Actor, ActorContext, ActorRef, Envelope } from '../src/runtime/actor';

/** The benchmark's messages: `ping` (answered), `data` (one-way payload), `drained` (answered with bytes seen). */
type BenchMessages = {
  ping: { body: null; reply: null };
  data: { body: Buffer; reply: void };
  drained: { body: null; reply: number };
};

function peer(id: string): ActorRef<BenchMessages> {
  return actorRef<BenchMessages>(id);
}

/**
 * The driving side: `rounds` ({to, n}) makes n sequential ping requests to `to`; `blast` ({to, n,
 * bytes}) sends n one-way envelopes of `bytes` payload, then a `drained` request (after all of them,
 * the pair being FIFO). Each replies once done.
 */
export function createBenchPingerActor(): Actor {
  let payload = Buffer.alloc(0);
  return {
    receive(envelope: Envelope, ctx: ActorContext): void | Promise<void> {
      const body = envelope.body as { to: string; n: number; bytes?: number };
      if (envelope.type === 'rounds') return rounds(envelope, ctx, body.to, body.n);
      if (envelope.type !== 'blast') throw new Error(`unexpected ${envelope.type}`);
      const bytes = body.bytes ?? 16_384;
      if (payload.length !== bytes) payload = Buffer.alloc(bytes, 0x61);
      for (let i = 0; i < body.n; i++) ctx.send(peer(body.to), 'data', payload);
      return ctx.request(peer(body.to), 'drained', null, 60_000).then((seen) => ctx.reply(envelope, seen));
    },
  };
}

async function rounds(envelope: Envelope, ctx: ActorContext, to: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await ctx.request(peer(to), 'ping', null, 60_000);
  ctx.reply(envelope, n);
}

/** The answering side: replies to `ping`, counts `data` bytes, answers `drained` with the count. */
export function createBenchPongerActor(): Actor {
  let seenBytes = 0;
  return {
    receive(envelope: Envelope, ctx: ActorContext): void {
      switch (envelope.type) {
        case 'ping':
          ctx.reply(envelope, null);
          return;
        case 'data':
          seenBytes += (envelope.body as Buffer).length;
          return;
        case 'drained':
          ctx.reply(envelope, seenBytes);
          return;
        default:
          throw new Error(`unexpected ${envelope.type}`);
      }
    },
  };
}

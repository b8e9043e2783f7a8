/**
 * An {@link Endpoint}: a mailbox for code that is not an actor (the network layer), living on the
 * thread that created it. Both runtimes use this class and supply the transport.
 */
import { ActorUnavailableError } from './actor';
import type { ActorId, ActorRef, Envelope, MessageMap, ReplyOf } from './actor';
import type { Clock, Timers } from '../io/clock';
import type { Logger } from '../io/logger';
import { PendingRequests } from './pending-requests';
import type { Endpoint } from './runtime';

/** What an endpoint needs from its runtime. */
export interface EndpointTransport {
  /** Routes an envelope (to an actor or another endpoint). */
  sendEnvelope(envelope: Envelope): void;
  /** A correlation id unique among this runtime's endpoints. */
  nextCorr(): number;
  /** Forgets the endpoint (after close). */
  removeEndpoint(endpoint: LocalEndpoint): void;
}

/** An endpoint on the creating thread; envelopes reach it through its runtime (module comment). */
export class LocalEndpoint implements Endpoint {
  /** Requests this endpoint awaits (the runtime fails them when their target crashes). */
  readonly pending: PendingRequests;
  private handler: ((envelope: Envelope) => void) | undefined;
  private closed = false;

  constructor(
    readonly id: ActorId,
    private readonly transport: EndpointTransport,
    readonly clock: Clock,
    readonly timers: Timers,
    private readonly log: Logger,
  ) {
    this.pending = new PendingRequests(timers);
  }

  send<M extends MessageMap, K extends keyof M & string>(to: ActorRef<M>, type: K, body: M[K]['body']): void {
    if (this.closed) return;
    this.transport.sendEnvelope({ to, from: this.id, type, body });
  }

  request<M extends MessageMap, K extends keyof M & string>(
    to: ActorRef<M>,
    type: K,
    body: M[K]['body'],
    timeoutMs: number,
  ): Promise<M[K]['reply']> {
    if (this.closed) return Promise.reject(new ActorUnavailableError(to, type, 'closed'));
    const corr = this.transport.nextCorr();
    const reply = this.pending.add<M[K]['reply']>(corr, to, type, timeoutMs);
    this.transport.sendEnvelope({ to, from: this.id, type, body, corr });
    return reply;
  }

  reply<E extends Envelope>(request: E, body: ReplyOf<E>): void {
    if (request.corr === undefined || this.closed) return;
    this.transport.sendEnvelope({
      to: request.from,
      from: this.id,
      type: 'reply',
      body,
      corr: request.corr,
      isReply: true,
    });
  }

  onMessage(handler: (envelope: Envelope) => void): void {
    this.handler = handler;
  }

  /** Closes: no more deliveries; pending requests fail with ActorUnavailableError(`closed`). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.removeEndpoint(this);
    this.pending.failAll('closed');
  }

  /** Delivers an envelope addressed to this endpoint (runtime use). */
  deliver(envelope: Envelope): void {
    if (this.closed) return;
    if (envelope.isReply === true) {
      if (envelope.corr !== undefined) this.pending.resolve(envelope.corr, envelope.from, envelope.body);
      return;
    }
    if (this.handler === undefined) {
      this.log.warn(
        { endpoint: this.id, from: envelope.from, type: envelope.type },
        'endpoint has no handler: message dropped',
      );
      return;
    }
    this.handler(envelope);
  }
}

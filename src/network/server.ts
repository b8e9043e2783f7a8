/**
 * The Kafka listener: accepts TCP connections on the broker's listeners and hands each one a
 * {@link Connection}. The network thread never touches files or blocks.
 */
import net from 'node:net';
import type { Clock } from '../io/clock';
import type { Logger } from '../io/logger';
import { Connection, type ConnectionLimits, type FrameHandler } from './connection';
import { RateLimitedWarning } from './rate-limited-warning';

export class KafkaServer {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  private readonly sockets = new Set<net.Socket>();

  /**
   * `clock` (the broker's injected clock) paces the warnings a remote peer can trigger: at most one
   * line a second each for bad connections and for connections over max.connections, with a count of
   * the ones left out.
   */
  constructor(
    handleFrame: FrameHandler,
    limits: ConnectionLimits & { maxConnections: number },
    log: Logger,
    clock: Clock,
  ) {
    const closeWarning = new RateLimitedWarning(log, clock);
    const overLimitWarning = new RateLimitedWarning(log, clock);
    this.server = net.createServer((socket) => {
      if (this.sockets.size >= limits.maxConnections) {
        // Kafka's acceptor waits for a slot; Node cannot hold an accepted socket unread for free, so
        // the connection over max.connections is closed at once (clients reconnect with backoff).
        overLimitWarning.warn(
          { remote: `${socket.remoteAddress}:${socket.remotePort}`, maxConnections: limits.maxConnections },
          'closing connection over max.connections',
        );
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      const connection = new Connection(
        socket,
        handleFrame,
        limits,
        log,
        (c) => this.connections.delete(c),
        closeWarning,
      );
      this.connections.add(connection);
    });
    // A failure to bind is listen()'s rejection (the start reports it in one line); log only later errors.
    this.server.on('error', (error) => {
      if (this.server.listening) log.error({ error: error.message }, 'listener error');
    });
  }

  /** Listens on host:port (0 picks a free port); resolves with the bound port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host, port }, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Stops accepting, closes every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Thrown by a frame handler (or an API handler) to close its connection after the answers before it
 * are written: an unknown API key, an unparsable request, a failed acks=0 produce. Its own module so
 * API handlers can throw it without importing the connection's socket code.
 */
export class CloseConnection extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CloseConnection';
  }
}

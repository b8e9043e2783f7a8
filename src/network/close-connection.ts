/**
 * Thrown by a frame handler (or an API handler) to close its connection after the answers before it
 * are written: an unknown API key, an unparsable request, a failed acks=0 produce. Its own module so
 * API handlers can throw it without importing the connection's socket code.
 */
export class CloseConnection extends Error {
  /**
   * @param errorCounts the error codes of the answer the client does not get (a failed acks=0
   *   produce), counted by the request metrics as Kafka's RequestChannel.closeConnection counts them.
   */
  constructor(
    reason: string,
    readonly errorCounts?: ReadonlyMap<number, number>,
  ) {
    super(reason);
    this.name = 'CloseConnection';
  }
}

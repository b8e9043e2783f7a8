/**
 * Batches the messages one thread posts to another within one turn into a single postMessage
 * (issue 13 item 2: postMessage was 12-19% of the network thread's busy time, one call per
 * envelope). Messages are queued in order and flushed on a microtask, so nothing waits for a later
 * event-loop turn: a socket read holding several requests, or a worker's delivery batch producing
 * several replies, crosses the thread boundary once. A single queued message is posted as itself;
 * two or more go as `{ k: 'batch', messages }` with every transfer list joined, and the receiver
 * handles each as if it had come alone, in order.
 *
 * Counting stays per message (the hub's direct-channel barriers count messages, not posts): the
 * callers count at {@link PostBatcher.post} time, as they did when each message was posted at once.
 */
import type { TransferListItem } from 'node:worker_threads';

/** Where a flush posts: a Worker, a MessagePort (worker side), or anything with their postMessage. */
export interface PostTarget<M> {
  postMessage(message: M | { k: 'batch'; messages: M[] }, transfer?: readonly TransferListItem[]): void;
}

export class PostBatcher<M> {
  private messages: M[] = [];
  private transfer: TransferListItem[] = [];
  private target: PostTarget<M> | null = null;

  /**
   * Queues `message` for `target` (its `transfer` items are transferred with the batch). A message
   * for a different target than the queued ones (a restarted worker) flushes them first.
   */
  post(target: PostTarget<M>, message: M, transfer?: readonly TransferListItem[]): void {
    if (this.target !== null && this.target !== target) this.flush();
    this.target = target;
    this.messages.push(message);
    if (transfer !== undefined) for (const item of transfer) this.transfer.push(item);
    if (this.messages.length === 1) queueMicrotask(() => this.flush());
  }

  /** Posts what is queued now (a no-op when nothing is). */
  flush(): void {
    const target = this.target;
    const messages = this.messages;
    if (target === null || messages.length === 0) return;
    const transfer = this.transfer;
    this.messages = [];
    this.transfer = [];
    this.target = null;
    if (messages.length === 1) target.postMessage(messages[0] as M, transfer);
    else target.postMessage({ k: 'batch', messages }, transfer);
  }
}

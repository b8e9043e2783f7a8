/**
 * A first-in first-out queue with O(1) push and shift (an array with a moving head, compacted when the
 * dead prefix dominates). Mailboxes and the simulation's channels hold many messages; Array#shift is
 * O(n) on large arrays.
 */
/** FIFO queue with O(1) push/shift (module comment). */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, without removing it; undefined when empty. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** Removes and returns the oldest item; undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes every item and returns them oldest first. */
  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }

  /** Keeps only the items for which `keep` is true (order preserved). */
  filter(keep: (item: T) => boolean): void {
    this.items = (this.items.slice(this.head) as T[]).filter(keep);
    this.head = 0;
  }

  /** Items oldest first (a copy). */
  toArray(): T[] {
    return this.items.slice(this.head) as T[];
  }
}

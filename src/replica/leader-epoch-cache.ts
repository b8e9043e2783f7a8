/**
 * The leader-epoch cache (KIP-101): for each leader epoch, the first offset written in it, persisted
 * in the partition's `leader-epoch-checkpoint`. A follower truncates a divergent suffix to the end of
 * the largest epoch it shares with its leader (KIP-101, KIP-279) instead of trusting the HW; a new
 * leader assigns its epoch at its LEO, and a follower assigns each epoch it appends batches of.
 *
 * A change is made in memory first, then the whole file is rewritten (Kafka's LeaderEpochFileCache
 * over LeaderEpochCheckpointFile). When the disk refuses the write (a full disk, an I/O error) the
 * change stays in memory and the method throws a KafkaStorageError: the caller takes the log dir's
 * replica offline, as Kafka's CheckpointFileWithFailureHandler does (LogDirFailureChannel
 * .maybeAddOfflineLogDir, then a KafkaStorageException) for an IOException on the file; the
 * next successful write (or {@link LeaderEpochCache.persistIfStale}) brings the file up to date.
 */
import assert from 'node:assert/strict';
import type { FileSystem } from '../io/file-system';
import { readLeaderEpochCheckpoint, writeLeaderEpochCheckpoint } from '../storage/checkpoint';
import { NO_PARTITION_LEADER_EPOCH, UNDEFINED_EPOCH_OFFSET } from '../protocol/sentinels';
import { asStorageError } from '../storage/storage-error';

/** OffsetsForLeaderEpoch's answer for an epoch the cache cannot place (EpochEndOffset.UNDEFINED_*). */
const UNDEFINED_EPOCH_END_OFFSET = { leaderEpoch: NO_PARTITION_LEADER_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };

export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

export class LeaderEpochCache {
  private constructor(
    private readonly fs: FileSystem,
    private readonly dir: string,
    private readonly entries: EpochEntry[],
  ) {}

  /** The last write of the checkpoint failed: the file lags behind the entries in memory. */
  private stale = false;

  /**
   * While true, writes of the checkpoint skip their fsync (a new partition's first epoch: see the
   * replica's start); {@link LeaderEpochCache.unsynced} tells whether the file awaits one.
   */
  deferSync = false;

  /** The file on disk was last written without fsync. */
  private unsyncedWrite = false;

  /** The checkpoint was last written with {@link LeaderEpochCache.deferSync} on and awaits an fsync. */
  get unsynced(): boolean {
    return this.unsyncedWrite;
  }

  /** Records that the caller fsynced the file (syncFiles): it is durable as written. */
  markSynced(): void {
    this.unsyncedWrite = false;
  }

  /**
   * Loads `<dir>/leader-epoch-checkpoint`. When it holds no entry (missing, unreadable or empty),
   * `rebuild` gives them from the log's batches (Log.epochStartOffsets) and the file is written
   * again when that found any.
   */
  static load(fs: FileSystem, dir: string, rebuild: () => EpochEntry[]): LeaderEpochCache {
    const entries = readLeaderEpochCheckpoint(fs, `${dir}/leader-epoch-checkpoint`);
    if (entries.length > 0) return new LeaderEpochCache(fs, dir, entries);
    const cache = new LeaderEpochCache(fs, dir, rebuild());
    if (cache.entries.length > 0) cache.persist();
    return cache;
  }

  /**
   * Replaces every entry with `entries` (Log.epochStartOffsets: the checkpoint disagreed with the log)
   * and rewrites the file. Throws a KafkaStorageError when the disk refuses (see the class comment).
   */
  rebuild(entries: readonly EpochEntry[]): void {
    this.entries.splice(0, this.entries.length, ...entries.map((e) => ({ ...e })));
    this.persist();
  }

  /**
   * Kafka's LeaderEpochFileCache.truncateFromEnd: drops the entries starting at or after
   * `endOffset` (the log was truncated there, or a follower found the leader does not have them).
   */
  truncateFromEnd(endOffset: number): void {
    let changed = false;
    while (this.entries.length && this.entries[this.entries.length - 1]!.startOffset >= endOffset) {
      this.entries.pop();
      changed = true;
    }
    if (changed) this.persist();
  }

  /**
   * Kafka's truncateFromStart: the log start moved to `startOffset`; the entry covering it now starts
   * there, older ones go.
   */
  truncateFromStart(startOffset: number): void {
    let changed = false;
    while (this.entries.length > 1 && this.entries[1]!.startOffset <= startOffset) {
      this.entries.shift();
      changed = true;
    }
    const first = this.entries[0];
    if (first !== undefined && first.startOffset < startOffset) {
      first.startOffset = startOffset;
      changed = true;
    }
    if (changed) this.persist();
  }

  /** Kafka's epochForOffset: the epoch of the entry covering `offset`, or null when none does. */
  epochForOffset(offset: number): number | null {
    let found: number | null = null;
    for (const e of this.entries) {
      if (e.startOffset > offset) break;
      found = e.epoch;
    }
    return found;
  }

  /** The start offset of `epoch`'s entry, or null when the cache has none. */
  startOffsetOf(epoch: number): number | null {
    return this.entries.find((e) => e.epoch === epoch)?.startOffset ?? null;
  }

  /** The latest epoch, or NO_PARTITION_LEADER_EPOCH (-1) when none. */
  get latestEpoch(): number {
    return this.entries.length ? this.entries[this.entries.length - 1]!.epoch : NO_PARTITION_LEADER_EPOCH;
  }

  /**
   * Records that `epoch` starts at `startOffset` (a no-op for the current epoch). Epochs only grow
   * (asserted). Entries at or past `startOffset` from older epochs are dropped, as Kafka does.
   */
  assign(epoch: number, startOffset: number): void {
    if (epoch === this.latestEpoch) return;
    assert.ok(epoch > this.latestEpoch, `leader epoch ${epoch} below the latest ${this.latestEpoch}`);
    while (this.entries.length && this.entries[this.entries.length - 1]!.startOffset >= startOffset) this.entries.pop();
    this.entries.push({ epoch, startOffset });
    this.persist();
  }

  /**
   * Rewrites the checkpoint when its last write failed (the file then lags behind memory); a no-op
   * otherwise. Throws a KafkaStorageError when the disk still refuses.
   */
  persistIfStale(): void {
    if (this.stale) this.persist();
  }

  /** Writes every entry to the checkpoint; on a disk error marks it stale and throws a KafkaStorageError. */
  private persist(): void {
    const path = `${this.dir}/leader-epoch-checkpoint`;
    try {
      writeLeaderEpochCheckpoint(this.fs, path, this.entries, { sync: !this.deferSync });
    } catch (error) {
      this.stale = true;
      throw asStorageError(error, `writing ${path}`);
    }
    this.stale = false;
    this.unsyncedWrite = this.deferSync;
  }

  /**
   * Kafka's LeaderEpochFileCache.endOffsetFor (KIP-101/KIP-279): the largest epoch <= `requestedEpoch`
   * and the offset where the next epoch starts (the LEO for the latest epoch). An epoch above the
   * latest, or -1, gives (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) = (-1, -1); an epoch below the first
   * gives (requested, first start offset).
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: number): { leaderEpoch: number; endOffset: number } {
    if (requestedEpoch < 0 || this.entries.length === 0) return { ...UNDEFINED_EPOCH_END_OFFSET };
    if (requestedEpoch === this.latestEpoch) return { leaderEpoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.entries.find((e) => e.epoch > requestedEpoch);
    if (!higher) return { ...UNDEFINED_EPOCH_END_OFFSET };
    const floor = [...this.entries].reverse().find((e) => e.epoch <= requestedEpoch);
    return floor
      ? { leaderEpoch: floor.epoch, endOffset: higher.startOffset }
      : { leaderEpoch: requestedEpoch, endOffset: higher.startOffset };
  }

  /** A copy of the entries, oldest first. */
  list(): EpochEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }
}

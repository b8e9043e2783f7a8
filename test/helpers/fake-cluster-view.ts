/**
 * A {@link ClusterView} over plain data, for the admin API's tests: brokers and partitions are fields a
 * test sets, crash and start flip a broker's state (with the real view's typed errors), every call is
 * recorded, and `failNext` makes the next read throw (the 500 path). `emitMetadata` / `emitRequest` feed
 * the watching metrics as the cluster's metadata push and dispatchers would.
 */
import {
  BrokerStateError,
  UnknownBrokerError,
  type BrokerInfo,
  type ClusterObserver,
  type ClusterView,
  type PartitionInfo,
} from '../../src/admin/cluster-view';
import type { MetadataImage } from '../../src/controller/metadata-records';
import type { RequestDoneInfo } from '../../src/network/dispatcher';

export class FakeClusterView implements ClusterView {
  brokerList: BrokerInfo[];
  partitionList: PartitionInfo[];
  /** Every crash and start asked for, in order (`crash 1`, `start 1`), failed ones included. */
  readonly calls: string[] = [];
  private readonly observers = new Set<ClusterObserver>();
  private failure: Error | null = null;

  constructor(
    readonly faultInjection: boolean,
    data: { brokers?: BrokerInfo[]; partitions?: PartitionInfo[] } = {},
  ) {
    this.brokerList = data.brokers ?? threeBrokers();
    this.partitionList = data.partitions ?? [];
  }

  /** Makes the next read (brokers or partitions) throw `error`. */
  failNext(error: Error): void {
    this.failure = error;
  }

  async brokers(): Promise<BrokerInfo[]> {
    this.throwIfFailing();
    return structuredClone(this.brokerList);
  }

  async partitions(): Promise<PartitionInfo[]> {
    this.throwIfFailing();
    return structuredClone(this.partitionList);
  }

  async crashBroker(id: number): Promise<void> {
    this.calls.push(`crash ${id}`);
    const broker = this.broker(id);
    if (broker.state === 'stopped') throw new BrokerStateError(id, broker.state, 'crash');
    broker.state = 'stopped';
  }

  async startBroker(id: number): Promise<void> {
    this.calls.push(`start ${id}`);
    const broker = this.broker(id);
    if (broker.state !== 'stopped') throw new BrokerStateError(id, broker.state, 'start');
    broker.state = 'running';
    broker.brokerEpoch += 1;
  }

  async stopBroker(id: number): Promise<void> {
    this.calls.push(`stop ${id}`);
    const broker = this.broker(id);
    if (broker.state === 'stopped') throw new BrokerStateError(id, broker.state, 'stop');
    broker.state = 'stopped';
  }

  watch(observer: ClusterObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** How many observers are subscribed (0 after the server closed). */
  get watchers(): number {
    return this.observers.size;
  }

  emitMetadata(image: MetadataImage): void {
    for (const o of this.observers) o.observeMetadata(image);
  }

  emitRequest(info: RequestDoneInfo): void {
    for (const o of this.observers) o.recordRequest(info);
  }

  private broker(id: number): BrokerInfo {
    const broker = this.brokerList.find((b) => b.id === id);
    if (broker === undefined) throw new UnknownBrokerError(id);
    return broker;
  }

  private throwIfFailing(): void {
    const failure = this.failure;
    this.failure = null;
    if (failure !== null) throw failure;
  }
}

/** Brokers 0, 1 and 2 on ports 9092-9094, all running at epoch 1. */
export function threeBrokers(): BrokerInfo[] {
  return [0, 1, 2].map((id) => ({ id, host: '127.0.0.1', port: 9092 + id, state: 'running', brokerEpoch: 1 }));
}

/**
 * Two partitions of topic `orders` over brokers 0-2: partition 0 fully in sync (LEO = HW = 10),
 * partition 1 under-replicated (broker 2 out of the ISR, stopped; its offsets unknown, -1).
 */
export function samplePartitions(): PartitionInfo[] {
  return [
    {
      topic: 'orders',
      partition: 0,
      leader: 0,
      leaderEpoch: 3,
      replicas: [0, 1, 2],
      isr: [0, 1, 2],
      offlineReplicas: [],
      perReplica: [0, 1, 2].map((brokerId) => ({ brokerId, logEndOffset: 10, fsyncedOffset: 10, highWatermark: 10 })),
    },
    {
      topic: 'orders',
      partition: 1,
      leader: 1,
      leaderEpoch: 5,
      replicas: [1, 2, 0],
      isr: [1, 0],
      offlineReplicas: [2],
      perReplica: [
        { brokerId: 1, logEndOffset: 7, fsyncedOffset: 6, highWatermark: 6 },
        { brokerId: 2, logEndOffset: -1, fsyncedOffset: -1, highWatermark: -1 },
        { brokerId: 0, logEndOffset: 6, fsyncedOffset: 6, highWatermark: 5 },
      ],
    },
  ];
}

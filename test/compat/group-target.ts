/**
 * The broker the consumer-group suites run against: a Skiff process (default) or, with
 * SKIFF_GROUP_TARGET=kafka, the real Kafka 4.4.0 fixture (test/helpers/kafka-fixture.ts), so
 * every group test can be proved right against Kafka before Skiff serves groups.
 *
 *   const target = await startGroupTarget({ initialRebalanceDelayMs: 0 });
 *   await target.createTopic('t', 6);
 *   await target.kill9AndRestart();    // SIGKILL, start again on the same data; then re-read target.bootstrap
 *   await target.stop();
 *
 * Both targets get the same group settings: group.initial.rebalance.delay.ms as asked (Kafka's
 * default 3000 when not given; the Kafka fixture's server.properties sets 0, so the default is
 * passed explicitly), offsets.topic.num.partitions left at Skiff's default (50) and the fixture's
 * (1): the coordinator's partition does not matter on one broker.
 */
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { startKafka, type KafkaFixture } from '../helpers/kafka-fixture';
import { createTopic } from './clients';

/** Which broker the group suites drive: SKIFF_GROUP_TARGET=kafka picks the Kafka 4.4.0 fixture. */
export const GROUP_TARGET: 'skiff' | 'kafka' = process.env.SKIFF_GROUP_TARGET === 'kafka' ? 'kafka' : 'skiff';

/** Kafka's default group.initial.rebalance.delay.ms (ms). */
export const DEFAULT_INITIAL_REBALANCE_DELAY_MS = 3000;

/** Options of {@link startGroupTarget}. */
export interface GroupTargetOptions {
  /**
   * group.initial.rebalance.delay.ms (ms): how long a new (Empty) group waits for more members
   * before its first rebalance completes. Default: Kafka's default, 3000.
   */
  initialRebalanceDelayMs?: number;
  /** More broker configs (Kafka names), for both targets. */
  overrides?: Record<string, string>;
}

/** A running broker for group tests. */
export interface GroupTarget {
  kind: 'skiff' | 'kafka';
  /** `127.0.0.1:<port>`; changes after {@link kill9AndRestart} on Skiff (a new free port). */
  readonly bootstrap: string;
  /** The broker's log so far (Skiff's stdout/stderr, Kafka's server.log), for failure messages. */
  logs(): string;
  /** Creates a topic (kafkajs admin, CreateTopics, replication factor 1) and waits for its leaders. */
  createTopic(topic: string, partitions: number): Promise<void>;
  /** SIGKILLs the broker (no shutdown at all), then starts it again on the same data dir with the same configs. */
  kill9AndRestart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the target broker (Skiff process or Kafka fixture) with the group settings asked for. */
export async function startGroupTarget(opts: GroupTargetOptions = {}): Promise<GroupTarget> {
  const configs: Record<string, string> = {
    'group.initial.rebalance.delay.ms': String(opts.initialRebalanceDelayMs ?? DEFAULT_INITIAL_REBALANCE_DELAY_MS),
    ...(opts.overrides ?? {}),
  };
  if (GROUP_TARGET === 'kafka') {
    const kafka: KafkaFixture = await startKafka({ overrides: configs, startTimeoutMs: 120_000 });
    return {
      kind: 'kafka',
      bootstrap: kafka.bootstrap,
      logs: () => kafka.logs(),
      createTopic: (topic, partitions) => createTopic(kafka.bootstrap, topic, partitions),
      async kill9AndRestart() {
        await kafka.kill9();
        await kafka.restart(120_000);
      },
      stop: () => kafka.stop(),
    };
  }
  let broker: BrokerProcess = await startBrokerProcess({ overrides: configs });
  const target = {
    kind: 'skiff' as const,
    bootstrap: `127.0.0.1:${broker.port}`,
    logs: () => broker.logs(),
    createTopic: (topic: string, partitions: number) => createTopic(target.bootstrap, topic, partitions),
    async kill9AndRestart() {
      const dataDir = broker.dataDir;
      await broker.kill9();
      broker = await startBrokerProcess({ dataDir, overrides: configs, startTimeoutMs: 60_000 });
      target.bootstrap = `127.0.0.1:${broker.port}`;
    },
    async stop() {
      await broker.stop();
    },
  };
  return target;
}

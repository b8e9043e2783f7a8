/**
 * Differential scenarios: each runs the same client code (Skiff's src/client library, raw requests
 * at the versions both brokers speak) against one broker and returns what it observed as plain
 * JSON. differential.test.ts runs every scenario against Apache Kafka and against Skiff and
 * compares the two results deeply; allowlist.ts names the differences that are tolerated.
 *
 * Rules for a scenario: fixed topic names (each broker is fresh; prefix them with the scenario's
 * name), explicit partitions and timestamps relative to ctx.baseTimestamp, no raw wall-clock values,
 * error codes by name. Add scenarios at the end of SCENARIOS; later issues (consumer groups,
 * transactions, replication) add theirs the same way.
 */
import { ApiKey } from '../../src/protocol/api-keys';
import { apiSchemas } from '../../src/protocol/registry';
import { err, type Json, type ScenarioContext, type ScenarioRecord } from './context';
import { GROUP_SCENARIOS } from './group-scenarios';

export interface Scenario {
  name: string;
  /** What it checks, for the test's title. */
  about: string;
  run(ctx: ScenarioContext): Promise<Json>;
}

const EARLIEST = -2;
const LATEST = -1;
const MAX_TIMESTAMP = -3;

/** `n` keyed records `<prefix>-key-i` -> `<prefix>-value-i` (with a compressible tail), ts i. */
function keyed(prefix: string, n: number, tsStep = 1): ScenarioRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `${prefix}-key-${i}`,
    value: `${prefix}-value-${i}-${'abcdefgh'.repeat(8)}`,
    ts: i * tsStep,
  }));
}

const apiVersions: Scenario = {
  name: 'api-versions',
  about: 'ApiVersions: the version range advertised for every API Skiff has a schema table for',
  async run(ctx) {
    const out: Record<string, Json> = {};
    // The client's own view is clamped to the common versions: ask again for the broker's real list.
    const body = await ctx.request(
      ApiKey.ApiVersions,
      { clientSoftwareName: 'skiff-oracle', clientSoftwareVersion: '0.1.0' },
      3,
    );
    const ranges = new Map(
      (body.apiKeys as Array<{ apiKey: number; minVersion: number; maxVersion: number }>).map((k) => [k.apiKey, k]),
    );
    for (const key of [...apiSchemas.keys()].sort((a, b) => a - b)) {
      const r = ranges.get(key);
      out[ApiKey[key]!] = r === undefined ? 'not advertised' : { minVersion: r.minVersion, maxVersion: r.maxVersion };
    }
    // v5 (KIP-1242): the cluster and node the client means to reach.
    const v5 = ctx.v(ApiKey.ApiVersions) >= 5;
    const target = async (clusterId: string | null, nodeId: number): Promise<Json> => {
      const r = await ctx.request(
        ApiKey.ApiVersions,
        { clientSoftwareName: 'skiff-oracle', clientSoftwareVersion: '0.1.0', clusterId, nodeId },
        5,
      );
      return { error: err(r.errorCode as number), apiKeys: (r.apiKeys as unknown[]).length > 0 };
    };
    const md = await ctx.client.metadata([]);
    const self = [...md.brokers.values()][0]!.nodeId;
    const targets: Json = v5
      ? {
          neither: await target(null, -1),
          both: await target(md.clusterId, self),
          otherCluster: await target('AAAAAAAAAAAAAAAAAAAAAA', self),
          otherNode: await target(md.clusterId, self + 100),
          clusterOnly: await target(md.clusterId, -1),
          nodeOnly: await target(null, self),
        }
      : 'version < 5';
    return { error: err(body.errorCode as number), apis: out, targets };
  },
};

const clusterMetadata: Scenario = {
  name: 'cluster-metadata',
  about: 'Metadata with no topics and DescribeCluster: cluster id, controller, brokers',
  async run(ctx) {
    const md = await ctx.client.metadata([]);
    const cluster = await ctx.request(ApiKey.DescribeCluster, {
      includeClusterAuthorizedOperations: false,
      endpointType: 1,
      includeFencedBrokers: false,
    });
    return {
      metadata: {
        clusterId: md.clusterId,
        controllerId: md.controllerId,
        brokers: [...md.brokers.values()].map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
        topics: md.topics.length,
      },
      describeCluster: {
        error: err(cluster.errorCode as number),
        clusterId: cluster.clusterId as string,
        controllerId: cluster.controllerId as number,
        brokers: (cluster.brokers as Array<Record<string, unknown>>).map((b) => ({
          brokerId: b.brokerId as number,
          host: b.host as string,
          port: b.port as number,
          rack: (b.rack as string | null) ?? null,
        })),
        clusterAuthorizedOperations: cluster.clusterAuthorizedOperations as number,
      },
    };
  },
};

const records: Scenario = {
  name: 'produce-fetch-records',
  about:
    'keys, values, nulls, empties, binary, repeated and null headers, out-of-order CreateTimes: produced and fetched back exactly',
  async run(ctx) {
    const topic = 'records';
    await ctx.createTopic(topic, 1);
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const odd: ScenarioRecord[] = [
      { key: 'k1', value: 'v1', headers: [['h', 'x']], ts: 5 },
      { key: null, value: 'no key', ts: 3 },
      { key: 'null value', value: null, ts: 10 },
      { key: '', value: '', ts: 10 },
      { key: null, value: null, ts: 0 },
      { key: binary, value: Buffer.concat([binary, binary]), ts: 7 },
      {
        key: 'headers',
        value: 'x',
        headers: [
          ['a', '1'],
          ['a', '2'],
          ['null', null],
          ['empty', ''],
          ['bin', binary],
        ],
        ts: 8,
      },
      { key: 'unicode ключ 鍵', value: 'значение 値 🎈', ts: 9 },
    ];
    const produced = [
      await ctx.produce(topic, 0, odd),
      await ctx.produce(topic, 0, keyed('batch2', 50)),
      await ctx.produce(topic, 0, [{ key: 'single', value: 'one record' }]),
    ];
    const all = await ctx.fetch(topic, 0, 0);
    return {
      produced,
      fetch: {
        error: all.error,
        highWatermark: all.highWatermark,
        logStartOffset: all.logStartOffset,
        batches: all.batches,
      },
      records: await ctx.readAll(topic, 0),
    };
  },
};

const partitions: Scenario = {
  name: 'multi-partition',
  about: '3 partitions: each keeps its own offsets; a partition that does not exist is refused',
  async run(ctx) {
    const topic = 'three';
    await ctx.createTopic(topic, 3);
    const produced: Json[] = [];
    for (const p of [0, 1, 2, 1, 2, 2]) produced.push(await ctx.produce(topic, p, keyed(`p${p}`, 3)));
    const missing = await ctx.produce(topic, 3, [{ key: 'k', value: 'v' }]);
    const read: Json[] = [];
    for (const p of [0, 1, 2]) read.push((await ctx.readAll(topic, p)).map((r) => [r.offset, r.key, r.value] as Json));
    return {
      produced,
      missingPartition: missing,
      read,
      latest: await Promise.all([0, 1, 2].map((p) => ctx.listOffset(topic, p, LATEST))),
    };
  },
};

const codecs: Scenario = {
  name: 'codecs',
  about:
    'gzip, snappy, lz4, zstd batches are stored and served with the producer codec; a topic compression.type recompresses',
  async run(ctx) {
    const topic = 'codecs';
    await ctx.createTopic(topic, 1);
    const produced: Json[] = [];
    for (const codec of [0, 1, 2, 3, 4] as const)
      produced.push(await ctx.produce(topic, 0, keyed(`codec${codec}`, 20), { codec }));
    const f = await ctx.fetch(topic, 0, 0);
    const stored = {
      batches: f.batches.map((b) => ({ baseOffset: b.baseOffset, codec: b.codec, recordCount: b.recordCount })),
      records: await ctx.readAll(topic, 0),
    };
    // compression.type on the topic: Kafka recompresses (LogValidator); `producer` keeps the batch as sent.
    const forced: Record<string, Json> = {};
    for (const [name, producerCodec] of [
      ['producer', 1],
      ['gzip', 0],
      ['zstd', 3],
      ['uncompressed', 1],
    ] as const) {
      const t = `codecs-topic-${name}`;
      const [created] = (await ctx.createTopics([
        { name: t, partitions: 1, replicationFactor: 1, configs: { 'compression.type': name } },
      ])) as Array<{ error: string }>;
      if (created!.error !== 'NONE') {
        forced[name] = { created: created!.error };
        continue;
      }
      await ctx.waitForTopic(t, 1);
      const r = await ctx.produce(t, 0, keyed(t, 10), { codec: producerCodec });
      const ff = await ctx.fetch(t, 0, 0);
      forced[name] = {
        created: created!.error,
        produced: r,
        batches: ff.batches.map((b) => ({ baseOffset: b.baseOffset, codec: b.codec, recordCount: b.recordCount })),
        values: ff.records.map((x) => x.value),
      };
    }
    // What a rewrite keeps: keys, nulls, headers, out-of-order CreateTimes, the producer's id and
    // sequence (an idempotent batch), and its duplicate detection; a LogAppendTime topic too.
    await ctx.createTopic('codecs-rewrite', 1, { 'compression.type': 'snappy' });
    await ctx.createTopic('codecs-rewrite-append-time', 1, {
      'compression.type': 'lz4',
      'message.timestamp.type': 'LogAppendTime',
    });
    const init = await ctx.initProducerId();
    const idem = {
      producerId: init.producerId as number,
      producerEpoch: init.producerEpoch as number,
      baseSequence: 0,
      codec: 4 as const,
    };
    const rich: ScenarioRecord[] = [
      {
        key: 'k1',
        value: 'v1',
        headers: [
          ['h', 'x'],
          ['n', null],
        ],
        ts: 30,
      },
      { key: null, value: null, ts: 10 },
      { key: Buffer.from([0, 255]), value: '', headers: [['h', 'y']], ts: 20 },
    ];
    const rewrite = {
      produced: await ctx.produce('codecs-rewrite', 0, rich, idem),
      duplicate: await ctx.produce('codecs-rewrite', 0, rich, idem),
      appendTime: await ctx.produce('codecs-rewrite-append-time', 0, rich, { codec: 1 }),
    };
    const fr = await ctx.fetch('codecs-rewrite', 0, 0);
    const fa = await ctx.fetch('codecs-rewrite-append-time', 0, 0);
    const rewritten = {
      ...rewrite,
      batches: fr.batches.map((b) => ({
        codec: b.codec,
        baseSequence: b.baseSequence,
        sameProducer: b.producerId === idem.producerId,
        recordCount: b.recordCount,
        timestampType: b.timestampType,
      })),
      records: fr.records,
      appendTimeBatches: fa.batches.map((b) => ({
        codec: b.codec,
        timestampType: b.timestampType,
        recordCount: b.recordCount,
      })),
      appendTimeRecords: fa.records,
    };
    return { produced, stored, forced, rewritten };
  },
};

const timestamps: Scenario = {
  name: 'timestamps',
  about: 'CreateTime kept as sent; LogAppendTime stamped by the broker; message.timestamp.before/after.max.ms',
  async run(ctx) {
    await ctx.createTopic('ts-create', 1);
    await ctx.createTopic('ts-append', 1, { 'message.timestamp.type': 'LogAppendTime' });
    await ctx.createTopic('ts-bounded', 1, {
      'message.timestamp.before.max.ms': '3600000',
      'message.timestamp.after.max.ms': '3600000',
    });
    const day = 24 * 3600 * 1000;
    return {
      createTime: {
        produced: await ctx.produce('ts-create', 0, keyed('c', 3, 100)),
        records: (await ctx.readAll('ts-create', 0)).map((r) => r.ts),
      },
      logAppendTime: {
        produced: await ctx.produce('ts-append', 0, keyed('a', 3, 100)),
        batches: (await ctx.fetch('ts-append', 0, 0)).batches,
        records: (await ctx.readAll('ts-append', 0)).map((r) => r.ts),
      },
      bounded: {
        twoDaysOld: await ctx.produce('ts-bounded', 0, [{ key: 'old', value: 'x', ts: -2 * day }]),
        twoDaysAhead: await ctx.produce('ts-bounded', 0, [{ key: 'future', value: 'x', ts: 2 * day }]),
        now: await ctx.produce('ts-bounded', 0, [{ key: 'now', value: 'x', ts: 0 }]),
      },
      defaultTopicTwoDaysAhead: await ctx.produce('ts-create', 0, [{ key: 'future', value: 'x', ts: 2 * day }]),
    };
  },
};

const listOffsets: Scenario = {
  name: 'list-offsets',
  about:
    'ListOffsets earliest, latest, max timestamp and by time (before, on, between, after records); empty partition; errors',
  async run(ctx) {
    await ctx.createTopic('lo-empty', 1);
    const empty = {
      earliest: await ctx.listOffset('lo-empty', 0, EARLIEST),
      latest: await ctx.listOffset('lo-empty', 0, LATEST),
      byTime: await ctx.listOffset('lo-empty', 0, ctx.baseTimestamp),
    };
    const topic = 'lo';
    await ctx.createTopic(topic, 1);
    await ctx.produce(topic, 0, [
      { key: 'a', value: '0', ts: 0 },
      { key: 'b', value: '1', ts: 10 },
      { key: 'c', value: '2', ts: 20 },
    ]);
    await ctx.produce(topic, 0, [
      { key: 'd', value: '3', ts: 30 },
      { key: 'e', value: '4', ts: 25 },
    ]);
    await ctx.produce(topic, 0, [{ key: 'f', value: '5', ts: 50 }]);
    const byTime: Record<string, Json> = {};
    for (const t of [-5, 0, 5, 10, 21, 26, 30, 31, 50, 51])
      byTime[`base${t >= 0 ? '+' : ''}${t}`] = await ctx.listOffset(topic, 0, ctx.baseTimestamp + t);
    const maxTs = ctx.v(ApiKey.ListOffsets) >= 7 ? await ctx.listOffset(topic, 0, MAX_TIMESTAMP) : 'version < 7';
    return {
      empty,
      earliest: await ctx.listOffset(topic, 0, EARLIEST),
      latest: await ctx.listOffset(topic, 0, LATEST),
      maxTimestamp: maxTs,
      byTime,
      unknownPartition: await ctx.listOffset(topic, 7, LATEST),
      unknownTopic: await ctx.listOffset('lo-no-such-topic', 0, LATEST),
      special: await specialTimestamps(ctx, topic),
    };
  },
};

/**
 * The special ListOffsets timestamps of tiered storage (-4 earliest local, -5 latest tiered, -6
 * earliest pending upload) and unknown ones, at the version that introduced each and just below it.
 */
async function specialTimestamps(ctx: ScenarioContext, topic: string): Promise<Json> {
  const top = ctx.v(ApiKey.ListOffsets);
  const out: Record<string, Json> = {};
  for (const [timestamp, since] of [
    [MAX_TIMESTAMP, 7],
    [-4, 8],
    [-5, 9],
    [-6, 11],
    [-7, 99],
    [-100, 99],
  ] as const) {
    for (const version of [since - 1, since, top]) {
      if (version > top || version < 1 || out[`${timestamp}@v${version}`] !== undefined) continue;
      const body = await ctx.request(
        ApiKey.ListOffsets,
        {
          replicaId: -1,
          isolationLevel: 0,
          topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }],
          timeoutMs: 30_000,
        },
        version,
      );
      const p = (body.topics as Array<{ partitions: Array<Record<string, unknown>> }>)[0]!.partitions[0]!;
      const ts = p.timestamp as number;
      out[`${timestamp}@v${version}`] = {
        error: err(p.errorCode as number),
        offset: p.offset as number,
        ts: ts >= 0 ? ts - ctx.baseTimestamp : ts,
        leaderEpoch: p.leaderEpoch as number,
      };
    }
  }
  return out;
}

const fetchEdges: Scenario = {
  name: 'fetch-edges',
  about:
    'Fetch at the high watermark, past it, negative, mid-batch; size limits (first batch always whole); unknown topic and partition',
  async run(ctx) {
    const topic = 'fe';
    await ctx.createTopic(topic, 1);
    const produced = [await ctx.produce(topic, 0, keyed('b1', 5)), await ctx.produce(topic, 0, keyed('b2', 5))];
    const summary = async (
      offset: number,
      opts: { partitionMaxBytes?: number; maxBytes?: number } = {},
    ): Promise<Json> => {
      const f = await ctx.fetch(topic, 0, offset, opts);
      return {
        error: f.error,
        highWatermark: f.highWatermark,
        logStartOffset: f.logStartOffset,
        batches: f.batches.map((b) => [b.baseOffset, b.recordCount]),
        offsets: f.records.map((r) => r.offset),
      };
    };
    const unknownPartition = await ctx.fetch(topic, 4, 0);
    const unknownTopic = await ctx
      .fetch('fe-no-such-topic', 0, 0)
      .catch((e: Error) => ({ error: `threw: ${e.message}` }));
    return {
      produced,
      atZero: await summary(0),
      midBatch: await summary(7),
      atHighWatermark: await summary(10),
      pastHighWatermark: await summary(11),
      negative: await summary(-1),
      partitionMaxBytes1: await summary(0, { partitionMaxBytes: 1 }),
      maxBytes1: await summary(0, { maxBytes: 1 }),
      partitionMaxBytesOneAndAHalfBatch: await summary(0, { partitionMaxBytes: 700 }),
      unknownPartition: { error: unknownPartition.error },
      unknownTopic: { error: (unknownTopic as { error: string }).error },
    };
  },
};

const deleteRecords: Scenario = {
  name: 'delete-records',
  about:
    'DeleteRecords to an offset, to the high watermark (-1), past it; log start offset seen by ListOffsets and Fetch',
  async run(ctx) {
    const topic = 'dr';
    await ctx.createTopic(topic, 1);
    await ctx.produce(topic, 0, keyed('a', 4));
    await ctx.produce(topic, 0, keyed('b', 4));
    const del = async (offset: number, partition = 0): Promise<Json> => {
      const body = await ctx.request(ApiKey.DeleteRecords, {
        topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset }] }],
        timeoutMs: 30_000,
      });
      const p = (body.topics as Array<{ partitions: Array<Record<string, unknown>> }>)[0]!.partitions[0]!;
      return { error: err(p.errorCode as number), lowWatermark: p.lowWatermark as number };
    };
    const to3 = await del(3);
    const after3 = {
      earliest: await ctx.listOffset(topic, 0, EARLIEST),
      fetchAt0: (await ctx.fetch(topic, 0, 0)).error,
      fetchAt3: await ctx.fetch(topic, 0, 3).then((f) => ({
        error: f.error,
        logStartOffset: f.logStartOffset,
        first: f.records.find((r) => r.offset >= 3)?.offset ?? null,
      })),
    };
    const backwards = await del(1);
    const pastEnd = await del(100);
    const toEnd = await del(-1);
    return {
      to3,
      after3,
      backwards,
      pastEnd,
      toEnd,
      earliestAfterAll: await ctx.listOffset(topic, 0, EARLIEST),
      unknownPartition: await del(5, 9),
    };
  },
};

const createTopics: Scenario = {
  name: 'create-topics',
  about: 'CreateTopics with configs, defaults, validateOnly, duplicates; Metadata of the result',
  async run(ctx) {
    const created = await ctx.createTopics([
      {
        name: 'ct-configs',
        partitions: 3,
        replicationFactor: 1,
        configs: {
          'retention.ms': '3600000',
          'cleanup.policy': 'compact',
          'max.message.bytes': '200000',
          'segment.bytes': '1048576',
        },
      },
      { name: 'ct-defaults' },
    ]);
    await ctx.waitForTopic('ct-configs', 3);
    await ctx.waitForTopic('ct-defaults', 1);
    const duplicate = await ctx.createTopics([{ name: 'ct-configs', partitions: 1, replicationFactor: 1 }]);
    const validateOnly = await ctx.createTopics(
      [{ name: 'ct-validate-only', partitions: 2, replicationFactor: 1 }],
      true,
    );
    const md = await ctx.client.metadata(['ct-configs', 'ct-defaults', 'ct-validate-only']);
    const topics = md.topics
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => ({
        name: t.name,
        error: err(t.errorCode),
        isInternal: t.isInternal,
        topicIdSet: t.topicId !== 'AAAAAAAAAAAAAAAAAAAAAA' && t.topicId !== '',
        partitions: t.partitions.map((p) => ({
          partition: p.partition,
          error: err(p.errorCode),
          leader: p.leader,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicas,
          isr: p.isr,
          offline: p.offlineReplicas,
        })),
      }));
    return { created, duplicate, validateOnly, topics };
  },
};

const createTopicErrors: Scenario = {
  name: 'create-topic-errors',
  about: 'CreateTopics refusals: bad names, name collisions, partitions, replication factor, config values and names',
  async run(ctx) {
    await ctx.createTopic('cte.collide', 1);
    const cases: Array<[string, Parameters<ScenarioContext['createTopics']>[0][number]]> = [
      ['space', { name: 'bad name', partitions: 1, replicationFactor: 1 }],
      ['empty', { name: '', partitions: 1, replicationFactor: 1 }],
      ['dot', { name: '.', partitions: 1, replicationFactor: 1 }],
      ['dotdot', { name: '..', partitions: 1, replicationFactor: 1 }],
      ['slash', { name: 'a/b', partitions: 1, replicationFactor: 1 }],
      ['250 chars', { name: 'x'.repeat(250), partitions: 1, replicationFactor: 1 }],
      ['249 chars', { name: 'y'.repeat(249), partitions: 1, replicationFactor: 1 }],
      ['collides with cte.collide', { name: 'cte_collide', partitions: 1, replicationFactor: 1 }],
      ['0 partitions', { name: 'cte-zero', partitions: 0, replicationFactor: 1 }],
      ['-5 partitions', { name: 'cte-negative', partitions: -5, replicationFactor: 1 }],
      ['replication factor 3', { name: 'cte-rf3', partitions: 1, replicationFactor: 3 }],
      ['replication factor 0', { name: 'cte-rf0', partitions: 1, replicationFactor: 0 }],
      [
        'retention.ms=abc',
        { name: 'cte-bad-value', partitions: 1, replicationFactor: 1, configs: { 'retention.ms': 'abc' } },
      ],
      [
        'cleanup.policy=sometimes',
        { name: 'cte-bad-enum', partitions: 1, replicationFactor: 1, configs: { 'cleanup.policy': 'sometimes' } },
      ],
      [
        'unknown config',
        { name: 'cte-unknown-config', partitions: 1, replicationFactor: 1, configs: { 'no.such.config': '1' } },
      ],
      ['internal name', { name: '__consumer_offsets', partitions: 1, replicationFactor: 1 }],
    ];
    const out: Record<string, Json> = {};
    for (const [label, topic] of cases) {
      const [r] = (await ctx.createTopics([topic])) as Array<Record<string, Json>>;
      // A missing field stays undefined (and so absent from the JSON), as before the index check.
      out[label] = { error: r!.error, errorMessage: r!.errorMessage } as Json;
    }
    return out;
  },
};

const topicConfigs: Scenario = {
  name: 'topic-configs',
  about:
    'DescribeConfigs of overrides and defaults (values, sources); IncrementalAlterConfigs SET/DELETE; AlterConfigs replace; bad values',
  async run(ctx) {
    const topic = 'tc';
    await ctx.createTopic(topic, 1, { 'retention.ms': '3600000', 'cleanup.policy': 'compact' });
    const watched = [
      'retention.ms',
      'cleanup.policy',
      'max.message.bytes',
      'segment.bytes',
      'retention.bytes',
      'min.insync.replicas',
      'compression.type',
      'message.timestamp.type',
      'segment.ms',
      'index.interval.bytes',
    ];
    const pick = async (): Promise<Json> => {
      const d = await ctx.describeTopicConfigs(topic);
      const picked: Record<string, Json> = {};
      for (const name of watched) picked[name] = d.configs[name] ?? 'missing';
      return { error: d.error, configs: picked };
    };
    // Kafka applies config changes through its controller: the broker that answers DescribeConfigs
    // sees them a moment after the alter returns. Poll (bounded) until the expected values show.
    const pickWhen = async (expected: Record<string, string>): Promise<Json> => {
      let last: Json = null;
      for (let i = 0; i < 50; i++) {
        last = await pick();
        const configs = (last as { configs: Record<string, { value: string | null } | string> }).configs;
        if (
          Object.entries(expected).every(
            ([name, value]) => (configs[name] as { value: string | null } | undefined)?.value === value,
          )
        )
          return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return last;
    };
    const initial = await pick();
    // Every topic config name the broker describes, as {name: true} so a missing name is its own difference.
    const allNames = Object.fromEntries(
      Object.keys((await ctx.describeTopicConfigs(topic)).configs)
        .sort()
        .map((n) => [n, true]),
    );
    const incremental = async (
      configs: Array<{ name: string; op: number; value: string | null }>,
      resource = topic,
    ): Promise<Json> => {
      const body = await ctx.request(ApiKey.IncrementalAlterConfigs, {
        resources: [
          {
            resourceType: 2,
            resourceName: resource,
            configs: configs.map((c) => ({ name: c.name, configOperation: c.op, value: c.value })),
          },
        ],
        validateOnly: false,
      });
      const r = (body.responses as Array<Record<string, unknown>>)[0]!;
      return { error: err(r.errorCode as number), errorMessage: (r.errorMessage as string | null) ?? null };
    };
    const set = await incremental([
      { name: 'retention.ms', op: 0, value: '7200000' },
      { name: 'max.message.bytes', op: 0, value: '300000' },
    ]);
    const del = await incremental([{ name: 'cleanup.policy', op: 1, value: null }]);
    const afterIncremental = await pickWhen({
      'retention.ms': '7200000',
      'max.message.bytes': '300000',
      'cleanup.policy': 'delete',
    });
    const badValue = await incremental([{ name: 'retention.ms', op: 0, value: 'abc' }]);
    const unknownName = await incremental([{ name: 'no.such.config', op: 0, value: '1' }]);
    const unknownTopic = await incremental([{ name: 'retention.ms', op: 0, value: '1' }], 'tc-no-such-topic');
    const alter = await ctx.request(ApiKey.AlterConfigs, {
      resources: [{ resourceType: 2, resourceName: topic, configs: [{ name: 'segment.bytes', value: '2097152' }] }],
      validateOnly: false,
    });
    const alterResult = (alter.responses as Array<Record<string, unknown>>)[0]!;
    const afterAlter = await pickWhen({ 'segment.bytes': '2097152', 'retention.ms': '604800000' });
    const describeUnknown = await ctx.describeTopicConfigs('tc-no-such-topic');
    const selected = await ctx.describeTopicConfigs(topic, ['retention.ms', 'no.such.config']);
    // Compression levels (KIP-390) and max.decompressed.message.bytes: defaults, and Kafka's bounds (validateOnly).
    const levelNames = [
      'compression.gzip.level',
      'compression.lz4.level',
      'compression.zstd.level',
      'max.decompressed.message.bytes',
    ];
    const levels = (await ctx.describeTopicConfigs(topic, levelNames)).configs;
    const bounds: Record<string, Json> = {};
    for (const [name, values] of [
      ['compression.gzip.level', ['-2', '-1', '0', '1', '9', '10', 'x']],
      ['compression.lz4.level', ['0', '1', '17', '18']],
      ['compression.zstd.level', ['-131073', '-131072', '0', '22', '23']],
      ['max.decompressed.message.bytes', ['0', '1', '2147483647', '2147483648']],
    ] as const) {
      for (const value of values) {
        const body = await ctx.request(ApiKey.IncrementalAlterConfigs, {
          resources: [{ resourceType: 2, resourceName: topic, configs: [{ name, configOperation: 0, value }] }],
          validateOnly: true,
        });
        const r = (body.responses as Array<Record<string, unknown>>)[0]!;
        bounds[`${name}=${value}`] = {
          error: err(r.errorCode as number),
          errorMessage: (r.errorMessage as string | null) ?? null,
        };
      }
    }
    return {
      initial,
      allNames,
      set,
      del,
      afterIncremental,
      badValue,
      unknownName,
      unknownTopic,
      alter: { error: err(alterResult.errorCode as number) },
      afterAlter,
      describeUnknown: { error: describeUnknown.error },
      selectedKeys: { error: selected.error, names: Object.keys(selected.configs).sort() },
      levels: Object.fromEntries(levelNames.map((n) => [n, levels[n] ?? 'missing'])),
      bounds,
    };
  },
};

const createPartitions: Scenario = {
  name: 'create-partitions',
  about: 'CreatePartitions: grow, same count, shrink, validateOnly, unknown topic',
  async run(ctx) {
    const topic = 'cp';
    await ctx.createTopic(topic, 1);
    const grow = async (count: number, validateOnly = false, name = topic): Promise<Json> => {
      const body = await ctx.request(ApiKey.CreatePartitions, {
        topics: [{ name, count, assignments: null }],
        timeoutMs: 30_000,
        validateOnly,
      });
      const r = (body.results as Array<Record<string, unknown>>)[0]!;
      return { error: err(r.errorCode as number), errorMessage: (r.errorMessage as string | null) ?? null };
    };
    const to3 = await grow(3);
    await ctx.waitForTopic(topic, 3);
    const same = await grow(3);
    const shrink = await grow(2);
    const validateOnly = await grow(5, true);
    const md = await ctx.client.metadata([topic]);
    return {
      to3,
      same,
      shrink,
      validateOnly,
      partitionsAfter: md.topics[0]!.partitions.length,
      unknown: await grow(2, false, 'cp-no-such-topic'),
      produceToNew: await ctx.produce(topic, 2, [{ key: 'k', value: 'v' }]),
    };
  },
};

const deleteTopics: Scenario = {
  name: 'delete-topics',
  about: 'DeleteTopics: existing, again, unknown; the topic is gone from Metadata and refuses produce',
  async run(ctx) {
    await ctx.createTopic('dt', 2);
    await ctx.produce('dt', 0, keyed('dt', 3));
    const del = async (names: string[]): Promise<Json> =>
      (await ctx.client.deleteTopics(names)).map((r) => ({ name: r.name, error: err(r.errorCode) }));
    const first = await del(['dt']);
    const gone = await ctx.waitForTopicGone('dt');
    const again = await del(['dt']);
    const unknown = await del(['dt-never-existed']);
    const produceAfter = await ctx.produce('dt', 0, [{ key: 'k', value: 'v' }]);
    // Re-creating the name gives an empty topic.
    await ctx.createTopic('dt', 1);
    return { first, gone, again, unknown, produceAfter, recreatedLatest: await ctx.listOffset('dt', 0, LATEST) };
  },
};

const unknownTopic: Scenario = {
  name: 'unknown-topic',
  about:
    'Metadata with and without auto-creation (valid and invalid names), Produce and DescribeConfigs of an unknown topic',
  async run(ctx) {
    const noCreate = await ctx.client.metadata(['ut-missing']);
    const autoCreate = await ctx.client.metadata(['ut-auto'], { allowAutoTopicCreation: true });
    await ctx.waitForTopic('ut-auto', 1);
    const invalid = await ctx.client.metadata(['ut bad name'], { allowAutoTopicCreation: true });
    const topicErr = (md: Awaited<ReturnType<typeof ctx.client.metadata>>): Json =>
      md.topics.map((t) => ({ name: t.name, error: err(t.errorCode), partitions: t.partitions.length }));
    return {
      noCreate: topicErr(noCreate),
      // Kafka answers the first auto-creating Metadata with LEADER_NOT_AVAILABLE or NONE depending on timing.
      autoCreate: autoCreate.topics.map((t) => ({ name: t.name, error: err(t.errorCode) })),
      autoCreatedPartitions: (await ctx.client.metadata(['ut-auto'])).topics[0]!.partitions.length,
      invalidName: topicErr(invalid),
      produce: await ctx.produce('ut-missing-produce', 0, [{ key: 'k', value: 'v' }]),
      stillMissing: topicErr(await ctx.client.metadata(['ut-missing-produce'])),
      describeConfigs: (await ctx.describeTopicConfigs('ut-missing')).error,
    };
  },
};

const oversized: Scenario = {
  name: 'oversized-records',
  about: 'max.message.bytes on a topic and message.max.bytes on the broker: MESSAGE_TOO_LARGE, nothing appended',
  async run(ctx) {
    await ctx.createTopic('big-topic-limit', 1, { 'max.message.bytes': '1000' });
    await ctx.createTopic('big-default', 1);
    const small = await ctx.produce('big-topic-limit', 0, [{ key: 'k', value: 'x'.repeat(800) }]);
    const tooBig = await ctx.produce('big-topic-limit', 0, [{ key: 'k', value: 'x'.repeat(2000) }]);
    const manySmallTooBig = await ctx.produce(
      'big-topic-limit',
      0,
      Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: 'y'.repeat(60) })),
    );
    // Incompressible 1.1 MB > message.max.bytes (1048588 by default on both brokers).
    const random = Buffer.alloc(1_100_000);
    for (let i = 0; i < random.length; i++) random[i] = (i * 2654435761) >>> 24;
    const overBroker = await ctx.produce('big-default', 0, [{ key: 'k', value: random }]);
    const justUnder = await ctx.produce('big-default', 0, [{ key: 'k', value: random.subarray(0, 1_000_000) }]);
    return {
      small,
      tooBig,
      manySmallTooBig,
      overBroker,
      justUnder,
      latest: {
        topicLimit: await ctx.listOffset('big-topic-limit', 0, LATEST),
        brokerLimit: await ctx.listOffset('big-default', 0, LATEST),
      },
    };
  },
};

const idempotence: Scenario = {
  name: 'idempotent-producer',
  about:
    'InitProducerId, sequences: in order, duplicate (original offset), gap (OUT_OF_ORDER_SEQUENCE_NUMBER), fenced epoch',
  async run(ctx) {
    const topic = 'idem';
    await ctx.createTopic(topic, 1);
    const init = await ctx.initProducerId();
    const producerId = init.producerId as number;
    const epoch = init.producerEpoch as number;
    const send = (baseSequence: number, n: number, e = epoch): Promise<Json> =>
      ctx.produce(topic, 0, keyed(`seq${baseSequence}`, n), { producerId, producerEpoch: e, baseSequence });
    const first = await send(0, 5);
    const duplicate = await send(0, 5);
    const next = await send(5, 3);
    const gap = await send(20, 2);
    const olderDuplicate = await send(0, 5);
    const inOrderAgain = await send(8, 1);
    const f = await ctx.fetch(topic, 0, 0);
    const second = await ctx.initProducerId();
    return {
      init: { error: err(init.errorCode as number), producerIdAssigned: producerId >= 0, epoch },
      secondInit: { error: err(second.errorCode as number), differentId: (second.producerId as number) !== producerId },
      first,
      duplicate,
      next,
      gap,
      olderDuplicate,
      inOrderAgain,
      batches: f.batches.map((b) => ({
        baseOffset: b.baseOffset,
        baseSequence: b.baseSequence,
        sameProducer: b.producerId === producerId,
        recordCount: b.recordCount,
      })),
    };
  },
};

const leaderEpochs: Scenario = {
  name: 'offset-for-leader-epoch',
  about: 'OffsetForLeaderEpoch on a fresh partition: epoch 0, a future epoch, an unknown partition and topic',
  async run(ctx) {
    const topic = 'ofle';
    await ctx.createTopic(topic, 1);
    await ctx.produce(topic, 0, keyed('e', 4));
    const ask = async (leaderEpoch: number, partition = 0, name = topic): Promise<Json> => {
      const body = await ctx.request(ApiKey.OffsetForLeaderEpoch, {
        replicaId: -1,
        topics: [{ topic: name, partitions: [{ partition, currentLeaderEpoch: -1, leaderEpoch }] }],
      });
      const p = (body.topics as Array<{ partitions: Array<Record<string, unknown>> }>)[0]!.partitions[0]!;
      return {
        error: err(p.errorCode as number),
        leaderEpoch: p.leaderEpoch as number,
        endOffset: p.endOffset as number,
      };
    };
    return {
      epoch0: await ask(0),
      epoch5: await ask(5),
      unknownPartition: await ask(0, 3),
      unknownTopic: await ask(0, 0, 'ofle-no-such-topic'),
    };
  },
};

const logDirs: Scenario = {
  name: 'describe-log-dirs',
  about: 'DescribeLogDirs: partition sizes of identical batches, offset lag, future flag',
  async run(ctx) {
    const topic = 'dld';
    await ctx.createTopic(topic, 2);
    await ctx.produce(topic, 0, keyed('d0', 10));
    await ctx.produce(topic, 1, keyed('d1', 3), { codec: 1 });
    const body = await ctx.request(ApiKey.DescribeLogDirs, { topics: [{ topic, partitions: [0, 1, 5] }] });
    const results = body.results as Array<Record<string, unknown>>;
    return {
      error: err((body.errorCode as number | undefined) ?? 0),
      dirs: results.length,
      results: results.map((r) => ({
        error: err(r.errorCode as number),
        logDir: r.logDir as string,
        totalBytesPositive: ((r.totalBytes as number | undefined) ?? -1) > 0,
        isCordoned: (r.isCordoned as boolean | undefined) ?? null,
        topics: (r.topics as Array<{ name: string; partitions: Array<Record<string, unknown>> }>).map((t) => ({
          name: t.name,
          partitions: t.partitions
            .map((p) => ({
              partition: p.partitionIndex as number,
              size: p.partitionSize as number,
              offsetLag: p.offsetLag as number,
              isFuture: p.isFutureKey as boolean,
            }))
            .sort((a, b) => a.partition - b.partition),
        })),
      })),
    };
  },
};

const compactedKeyless: Scenario = {
  name: 'compacted-keyless',
  about:
    'A compacted topic refuses records without a key: INVALID_RECORD naming each keyless record (RecordErrors), plain and compressed',
  async run(ctx) {
    const topic = 'ck';
    await ctx.createTopic(topic, 1, { 'cleanup.policy': 'compact' });
    const mixed: ScenarioRecord[] = [
      { key: 'a', value: '0' },
      { key: null, value: '1' },
      { key: 'b', value: '2' },
      { key: null, value: '3' },
    ];
    return {
      plain: await ctx.produce(topic, 0, mixed),
      gzip: await ctx.produce(topic, 0, mixed, { codec: 1 }),
      keyed: await ctx.produce(topic, 0, [{ key: 'c', value: '4' }]),
      latest: await ctx.listOffset(topic, 0, LATEST),
    };
  },
};

const maxDecompressed: Scenario = {
  name: 'max-decompressed',
  about:
    'max.decompressed.message.bytes on a topic: a compressed batch with a record over it is INVALID_RECORD, nothing appended; an uncompressed one is not bounded by it',
  async run(ctx) {
    const topic = 'mdmb';
    await ctx.createTopic(topic, 1, { 'max.decompressed.message.bytes': '1024' });
    const records: ScenarioRecord[] = [
      { key: 'a', value: '0' },
      { key: 'b', value: 'x'.repeat(4096) },
      { key: 'c', value: '2' },
    ];
    return {
      // Kafka answers without an error message: the wording Skiff uses is that of its InvalidRecordException (DefaultRecord.readFrom).
      gzip: await ctx.produce(topic, 0, records, { codec: 1 }),
      zstd: await ctx.produce(topic, 0, records, { codec: 4 }),
      plain: await ctx.produce(topic, 0, records),
      latest: await ctx.listOffset(topic, 0, LATEST),
    };
  },
};

const electLeaders: Scenario = {
  name: 'elect-leaders',
  about:
    'ElectLeaders: preferred and unclean on led partitions (ELECTION_NOT_NEEDED), unknown topic/partition, bad election type, all partitions (null), empty list, v0-v2',
  async run(ctx) {
    const topic = 'el';
    await ctx.createTopic(topic, 2);
    type Results = Array<{
      topic: string;
      partitionResult: Array<{ partitionId: number; errorCode: number; errorMessage: string | null }>;
    }>;
    const elect = async (
      electionType: number,
      topicPartitions: Array<{ topic: string; partitions: number[] }> | null,
      version?: number,
    ): Promise<Json> => {
      const body = await ctx.request(
        ApiKey.ElectLeaders,
        { electionType, topicPartitions, timeoutMs: 10_000 },
        version,
      );
      let results = body.replicaElectionResults as Results;
      // Null asks for every topic: keep this scenario's, and say whether any other topic listed a partition.
      const othersListedPartitions =
        topicPartitions === null
          ? results.some((r) => !r.topic.startsWith(topic) && r.partitionResult.length > 0)
          : null;
      if (topicPartitions === null)
        results = results.filter((r) => r.topic.startsWith(topic)).sort((a, b) => a.topic.localeCompare(b.topic));
      return {
        error: err((body.errorCode as number | undefined) ?? 0),
        othersListedPartitions,
        results: results.map((r) => ({
          topic: r.topic,
          partitions: r.partitionResult.map((p) => ({
            partition: p.partitionId,
            error: err(p.errorCode),
            errorMessage: p.errorMessage,
          })),
        })),
      };
    };
    const listed = [
      { topic, partitions: [1, 0, 5, 0] },
      { topic: 'el-no-such-topic', partitions: [0] },
    ];
    const out: Record<string, Json> = {
      preferred: await elect(0, listed),
      unclean: await elect(1, listed),
      badType: await elect(3, listed),
      allPreferred: await elect(0, null),
      allUnclean: await elect(1, null),
      allBadType: await elect(7, null),
      empty: await elect(0, []),
    };
    for (let v = 0; v < ctx.v(ApiKey.ElectLeaders); v++)
      out[`v${v}`] = await elect(v === 0 ? 5 : 0, [{ topic, partitions: [0] }], v);
    return out;
  },
};

/** Every scenario, in run order. */
export const SCENARIOS: readonly Scenario[] = [
  apiVersions,
  clusterMetadata,
  records,
  partitions,
  codecs,
  timestamps,
  listOffsets,
  fetchEdges,
  deleteRecords,
  createTopics,
  createTopicErrors,
  topicConfigs,
  createPartitions,
  deleteTopics,
  unknownTopic,
  oversized,
  idempotence,
  leaderEpochs,
  logDirs,
  compactedKeyless,
  maxDecompressed,
  electLeaders,
  ...GROUP_SCENARIOS,
];

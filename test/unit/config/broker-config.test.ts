import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  BROKER_CONFIG_DEFS,
  buildBrokerConfig,
  ConfigError,
  defaultBrokerConfig,
  formatListener,
  IGNORED_BROKER_CONFIG_KEYS,
  parseProperties,
  type BrokerConfig,
} from '../../../src/config/broker-config';

function build(entries: Record<string, string>): BrokerConfig {
  return buildBrokerConfig(new Map(Object.entries(entries)));
}

/** The problems of the ConfigError that `entries` raises (fails if it raises none). */
function problemsOf(entries: Record<string, string>): string[] {
  try {
    build(entries);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.message, err.problems.join('\n'));
    return err.problems;
  }
  assert.fail(`expected a ConfigError for ${JSON.stringify(entries)}`);
}

/** Asserts that `entries` is rejected with exactly one problem matching `pattern`. */
function assertRejected(entries: Record<string, string>, pattern: RegExp): void {
  const problems = problemsOf(entries);
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, pattern);
}

// Kafka 3.8's config/kraft/server.properties, comments shortened.
const KAFKA_KRAFT_SERVER_PROPERTIES = `
############################# Server Basics #############################
# The role of this server. Setting this puts us in KRaft mode
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:9093

############################# Socket Server Settings #############################
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://localhost:9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600

############################# Log Basics #############################
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
#log.flush.interval.messages=10000
#log.flush.interval.ms=1000
log.retention.hours=168
#log.retention.bytes=1073741824
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`;

// Kafka 3.x config/server.properties (ZooKeeper mode), the settings that are not commented out.
const KAFKA_ZK_SERVER_PROPERTIES = `
broker.id=0
#listeners=PLAINTEXT://:9092
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kafka-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.retention.check.interval.ms=300000
zookeeper.connect=localhost:2181
zookeeper.connection.timeout.ms=18000
group.initial.rebalance.delay.ms=0
`;

describe('buildBrokerConfig: defaults', () => {
  it('uses Kafka defaults (kafka-facts.md §4) and Skiff defaults with no input', () => {
    const config = defaultBrokerConfig();
    assert.deepEqual(
      { ...config, values: undefined, sources: undefined },
      {
        nodeId: 0,
        listeners: [{ host: '127.0.0.1', port: 9092 }],
        advertisedListeners: [{ host: '127.0.0.1', port: 9092 }],
        logDirs: ['./data'],
        numPartitions: 1,
        defaultReplicationFactor: 1,
        autoCreateTopicsEnable: true,
        logSegmentBytes: 1073741824,
        logIndexIntervalBytes: 4096,
        messageMaxBytes: 1048588,
        socketRequestMaxBytes: 104857600,
        logFlushIntervalMessages: Number.MAX_SAFE_INTEGER,
        logFlushIntervalMs: null,
        numIoThreads: 8,
        writeCachingDefault: false,
        replicaHighWatermarkCheckpointIntervalMs: 5000,
        logFlushOffsetCheckpointIntervalMs: 60000,
        logRetentionMs: 604800000,
        logRetentionBytes: -1,
        logRetentionCheckIntervalMs: 300000,
        logRollMs: 604800000,
        logIndexSizeMaxBytes: 10485760,
        logCleanupPolicy: 'delete',
        logCleanerEnable: true,
        logCleanerBackoffMs: 15000,
        logCleanerDeleteRetentionMs: 86400000,
        logCleanerMinCleanableRatio: 0.5,
        logCleanerMinCompactionLagMs: 0,
        logCleanerMaxCompactionLagMs: Number.MAX_SAFE_INTEGER,
        logMessageTimestampType: 'CreateTime',
        logMessageTimestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
        logMessageTimestampAfterMaxMs: 3600000,
        minInsyncReplicas: 1,
        uncleanLeaderElectionEnable: false,
        replicaLagTimeMaxMs: 30000,
        replicaFetchMaxBytes: 1048576,
        replicaFetchWaitMaxMs: 500,
        replicaFetchMinBytes: 1,
        replicaFetchBackoffMs: 1000,
        replicaFetchResponseMaxBytes: 10485760,
        autoLeaderRebalanceEnable: true,
        leaderImbalanceCheckIntervalSeconds: 300,
        leaderImbalancePerBrokerPercentage: 10,
        brokerHeartbeatIntervalMs: 2000,
        brokerSessionTimeoutMs: 9000,
        controlledShutdownEnable: true,
        compressionType: 'producer',
        compressionGzipLevel: -1,
        compressionLz4Level: 9,
        compressionZstdLevel: 3,
        maxDecompressedMessageBytes: 2147483639,
        maxConnections: 2147483647,
        connectionsMaxIdleMs: 600000,
        offsetsTopicNumPartitions: 50,
        offsetsTopicReplicationFactor: 3,
        offsetsTopicSegmentBytes: 104857600,
        offsetsRetentionMinutes: 10080,
        offsetsRetentionCheckIntervalMs: 600000,
        offsetMetadataMaxBytes: 4096,
        groupInitialRebalanceDelayMs: 3000,
        groupMinSessionTimeoutMs: 6000,
        groupMaxSessionTimeoutMs: 1800000,
        groupMaxSize: 2147483647,
        values: undefined,
        sources: undefined,
        warnings: [],
      },
    );
  });

  it('reports every effective value as a string, all from defaults', () => {
    const config = defaultBrokerConfig();
    assert.equal(config.values.get('log.flush.interval.messages'), '9223372036854775807');
    assert.equal(config.values.get('listeners'), 'PLAINTEXT://127.0.0.1:9092');
    assert.equal(config.values.get('advertised.listeners'), 'PLAINTEXT://127.0.0.1:9092');
    assert.equal(config.values.get('broker.id'), '0');
    assert.equal(config.values.has('log.flush.interval.ms'), false, 'an unset nullable key has no value');
    assert.equal(config.values.has('log.dir'), false);
    assert.ok([...config.sources.values()].every((source) => source === 'DEFAULT_CONFIG'));
    assert.deepEqual([...config.sources.keys()], [...config.values.keys()]);
  });

  it('has a consistent defaults table', () => {
    const keys = BROKER_CONFIG_DEFS.map((def) => def.key);
    assert.equal(new Set(keys).size, keys.length, 'no key twice');
    for (const def of BROKER_CONFIG_DEFS) {
      assert.ok(def.doc.length > 10, `${def.key} has a doc line`);
      assert.ok(!IGNORED_BROKER_CONFIG_KEYS.includes(def.key), `${def.key} is not also ignored`);
      if (def.defaultValue !== null) {
        // Every default must pass its own validation when set explicitly.
        assert.doesNotThrow(() => build({ [def.key]: def.defaultValue as string }), def.key);
      }
    }
    for (const key of [
      'process.roles',
      'controller.quorum.voters',
      'zookeeper.connect',
      'num.network.threads',
      'transaction.state.log.replication.factor',
    ]) {
      assert.ok(IGNORED_BROKER_CONFIG_KEYS.includes(key), `${key} from Kafka's sample server.properties is accepted`);
    }
    assert.equal(new Set(IGNORED_BROKER_CONFIG_KEYS).size, IGNORED_BROKER_CONFIG_KEYS.length);
  });
});

describe('buildBrokerConfig: known keys', () => {
  it('parses every typed field and trims values', () => {
    const config = build({
      'node.id': ' 7 ',
      'num.partitions': '3',
      'default.replication.factor': '3',
      'auto.create.topics.enable': 'FALSE',
      'log.segment.bytes': '1048576',
      'log.index.interval.bytes': '0',
      'message.max.bytes': '2000000',
      'socket.request.max.bytes': '1',
      'log.flush.interval.messages': '1',
      'log.flush.interval.ms': '1000',
      'num.io.threads': '2',
      'write.caching.default': 'True',
      'replica.high.watermark.checkpoint.interval.ms': '100',
      'log.flush.offset.checkpoint.interval.ms': '200',
    });
    assert.equal(config.nodeId, 7);
    assert.equal(config.numPartitions, 3);
    assert.equal(config.defaultReplicationFactor, 3);
    assert.equal(config.autoCreateTopicsEnable, false);
    assert.equal(config.logSegmentBytes, 1048576);
    assert.equal(config.logIndexIntervalBytes, 0);
    assert.equal(config.messageMaxBytes, 2000000);
    assert.equal(config.socketRequestMaxBytes, 1);
    assert.equal(config.logFlushIntervalMessages, 1);
    assert.equal(config.logFlushIntervalMs, 1000);
    assert.equal(config.numIoThreads, 2);
    assert.equal(config.writeCachingDefault, true);
    assert.equal(config.replicaHighWatermarkCheckpointIntervalMs, 100);
    assert.equal(config.logFlushOffsetCheckpointIntervalMs, 200);
    assert.equal(config.values.get('node.id'), '7');
    assert.equal(config.values.get('auto.create.topics.enable'), 'FALSE');
    assert.equal(config.sources.get('num.partitions'), 'STATIC_BROKER_CONFIG');
    assert.equal(config.sources.get('listeners'), 'DEFAULT_CONFIG');
  });

  it('clamps long values past 2^53-1 (Kafka Long.MAX = never) to Number.MAX_SAFE_INTEGER', () => {
    const config = build({
      'log.flush.interval.messages': '9223372036854775807',
      'log.flush.interval.ms': '9007199254740993',
    });
    assert.equal(config.logFlushIntervalMessages, Number.MAX_SAFE_INTEGER);
    assert.equal(config.logFlushIntervalMs, Number.MAX_SAFE_INTEGER);
  });

  it('accepts broker.id as an alias of node.id', () => {
    const config = build({ 'broker.id': '4' });
    assert.equal(config.nodeId, 4);
    assert.equal(config.values.get('node.id'), '4');
    assert.equal(config.sources.get('node.id'), 'STATIC_BROKER_CONFIG');
    assert.deepEqual(config.warnings, []);
  });

  it('ignores broker.id with a warning when node.id is equal, and rejects a different one', () => {
    const config = build({ 'broker.id': '4', 'node.id': '4' });
    assert.equal(config.nodeId, 4);
    assert.deepEqual(config.warnings, ['Ignoring broker.id: node.id is set']);
    assertRejected({ 'broker.id': '4', 'node.id': '5' }, /broker\.id \(4\) and node\.id \(5\)/);
  });

  it('reads log.dirs as a comma list and falls back to log.dir', () => {
    assert.deepEqual(build({ 'log.dirs': ' /a , /b,,/c ' }).logDirs, ['/a', '/b', '/c']);
    const fromLogDir = build({ 'log.dir': '/only' });
    assert.deepEqual(fromLogDir.logDirs, ['/only']);
    assert.equal(fromLogDir.values.get('log.dirs'), '/only');
    const both = build({ 'log.dir': '/x', 'log.dirs': '/y' });
    assert.deepEqual(both.logDirs, ['/y']);
    assert.deepEqual(both.warnings, ['Ignoring log.dir: log.dirs is set']);
  });
});

describe('buildBrokerConfig: listeners', () => {
  it('parses host and port, port 0 included', () => {
    const config = build({ listeners: 'PLAINTEXT://localhost:0' });
    assert.deepEqual(config.listeners, [{ host: 'localhost', port: 0 }]);
    assert.deepEqual(config.advertisedListeners, [{ host: 'localhost', port: 0 }]);
  });

  it('binds every interface for an empty host and advertises 127.0.0.1 for a wildcard', () => {
    const config = build({ listeners: 'PLAINTEXT://:9093' });
    assert.deepEqual(config.listeners, [{ host: '0.0.0.0', port: 9093 }]);
    assert.deepEqual(config.advertisedListeners, [{ host: '127.0.0.1', port: 9093 }]);
    assert.equal(config.values.get('listeners'), 'PLAINTEXT://0.0.0.0:9093');
  });

  it('accepts bracketed IPv6 hosts and formats them back', () => {
    const config = build({ listeners: 'PLAINTEXT://[::1]:9092' });
    assert.deepEqual(config.listeners, [{ host: '::1', port: 9092 }]);
    assert.equal(formatListener(config.listeners[0]!), 'PLAINTEXT://[::1]:9092');
  });

  it('uses advertised.listeners when set', () => {
    const config = build({
      listeners: 'PLAINTEXT://0.0.0.0:9092',
      'advertised.listeners': 'plaintext://broker.example:19092',
    });
    assert.deepEqual(config.advertisedListeners, [{ host: 'broker.example', port: 19092 }]);
  });

  it('drops listeners named in controller.listener.names, with a warning', () => {
    const config = build({
      listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      'controller.listener.names': 'CONTROLLER',
    });
    assert.deepEqual(config.listeners, [{ host: '0.0.0.0', port: 9092 }]);
    assert.ok(
      config.warnings.some((w) => /controller listener CONTROLLER:\/\/:9093/.test(w)),
      config.warnings.join('\n'),
    );
  });

  it('rejects other security protocols, bad forms, bad ports, duplicates and wildcard advertised hosts', () => {
    assertRejected(
      { listeners: 'SSL://:9093' },
      /^Invalid value SSL:\/\/:9093 for configuration listeners: listener SSL is not supported/,
    );
    assertRejected({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093' }, /listener CONTROLLER is not supported/);
    assertRejected({ listeners: 'localhost:9092' }, /is not of the form PLAINTEXT:\/\/host:port/);
    assertRejected({ listeners: 'PLAINTEXT://host' }, /is not of the form/);
    assertRejected({ listeners: 'PLAINTEXT://host:70000' }, /port 70000 is not in 0\.\.65535/);
    assertRejected({ listeners: 'PLAINTEXT://a:1,PLAINTEXT://b:2' }, /PLAINTEXT appears more than once/);
    assertRejected({ listeners: '' }, /needs one PLAINTEXT:\/\/host:port listener/);
    assertRejected({ 'advertised.listeners': 'PLAINTEXT://0.0.0.0:9092' }, /non-routable address "0\.0\.0\.0"/);
    assertRejected({ 'advertised.listeners': 'PLAINTEXT://:9092' }, /non-routable/);
  });
});

describe('buildBrokerConfig: listener hosts (Kafka EndPoint / Utils.getHost character rule)', () => {
  it('rejects a host that is neither a host name nor an IP address, in listeners and advertised.listeners', () => {
    for (const key of ['listeners', 'advertised.listeners']) {
      assertRejected({ [key]: 'PLAINTEXT://bad host:1' }, /host "bad host" is not a host name or IP address/);
      assertRejected({ [key]: 'PLAINTEXT://b@d:1' }, /host "b@d" is not a host name or IP address/);
      assertRejected({ [key]: 'PLAINTEXT://[not-v6]:1' }, /host "not-v6" is not a host name or IP address/);
    }
  });

  it('accepts DNS names, IPv4 and bracketed IPv6 literals (with a zone)', () => {
    for (const host of ['broker-1.example.com', 'kafka_1', '10.0.0.7', '[fe80::1%eth0]', '[::1]']) {
      const config = build({ 'advertised.listeners': `PLAINTEXT://${host}:19092` });
      assert.equal(config.advertisedListeners[0]?.host, host.replace(/^\[|\]$/g, ''));
    }
  });
});

describe('buildBrokerConfig: invalid values', () => {
  it('names the key and the reason, Kafka-style', () => {
    assertRejected(
      { 'num.partitions': 'three' },
      /^Invalid value three for configuration num\.partitions: Not a number of type INT$/,
    );
    assertRejected(
      { 'num.partitions': '0' },
      /^Invalid value 0 for configuration num\.partitions: Value must be at least 1$/,
    );
    assertRejected({ 'num.partitions': '1.5' }, /Not a number of type INT/);
    assertRejected({ 'num.partitions': '' }, /Not a number of type INT/);
    assertRejected({ 'message.max.bytes': '2147483648' }, /message\.max\.bytes: Not a number of type INT/);
    assertRejected({ 'log.segment.bytes': '13' }, /Value must be at least 14/);
    assertRejected({ 'log.flush.interval.messages': '0' }, /Value must be at least 1/);
    assertRejected({ 'log.flush.interval.ms': '-1' }, /Value must be at least 0/);
    assertRejected({ 'log.flush.interval.ms': '9223372036854775808' }, /Not a number of type LONG/);
    assertRejected({ 'node.id': '-1' }, /node\.id: Value must be at least 0/);
    assertRejected({ 'num.io.threads': '0x10' }, /Not a number of type INT/);
    assertRejected(
      { 'auto.create.topics.enable': 'yes' },
      /auto\.create\.topics\.enable: Expected value to be either true or false/,
    );
    assertRejected({ 'log.dirs': ' , ' }, /log\.dirs: needs at least one directory/);
    assertRejected({ 'log.dirs': '/a,/b/../a' }, /directory \/b\/\.\.\/a is listed twice/);
  });

  it('reads the log cleaner keys and checks the ratio range', () => {
    const config = build({
      'log.cleaner.enable': 'false',
      'log.cleaner.backoff.ms': '200',
      'log.cleaner.delete.retention.ms': '1000',
      'log.cleaner.min.cleanable.ratio': '0.25',
      'log.cleaner.min.compaction.lag.ms': '5',
      'log.cleaner.max.compaction.lag.ms': '60000',
    });
    assert.deepEqual(
      [
        config.logCleanerEnable,
        config.logCleanerBackoffMs,
        config.logCleanerDeleteRetentionMs,
        config.logCleanerMinCleanableRatio,
        config.logCleanerMinCompactionLagMs,
        config.logCleanerMaxCompactionLagMs,
      ],
      [false, 200, 1000, 0.25, 5, 60000],
    );
    assert.deepEqual(config.warnings, [], 'log.cleaner.enable is a real key now, not an ignored one');
    assertRejected(
      { 'log.cleaner.min.cleanable.ratio': '1.5' },
      /log\.cleaner\.min\.cleanable\.ratio: Value must be in the range \[0, 1\]/,
    );
    assertRejected({ 'log.cleaner.min.cleanable.ratio': 'half' }, /Not a number of type DOUBLE/);
    assertRejected({ 'log.cleaner.max.compaction.lag.ms': '0' }, /Value must be at least 1/);
  });

  it('bounds the compression levels and max.decompressed.message.bytes as Kafka 4.4 does (its messages)', () => {
    assertRejected(
      { 'compression.gzip.level': '0' },
      /^Invalid value 0 for configuration compression\.gzip\.level: Value must be between 1 and 9 or equal to -1$/,
    );
    assertRejected({ 'compression.gzip.level': '10' }, /Value must be between 1 and 9 or equal to -1$/);
    assertRejected(
      { 'compression.lz4.level': '18' },
      /^Invalid value 18 for configuration compression\.lz4\.level: Value must be no more than 17$/,
    );
    assertRejected({ 'compression.zstd.level': '-131073' }, /Value must be at least -131072$/);
    assertRejected({ 'max.decompressed.message.bytes': '2147483640' }, /Value must be no more than 2147483639$/);
    const accepted = buildBrokerConfig(
      new Map(
        Object.entries({
          'compression.gzip.level': '9',
          'compression.lz4.level': '1',
          'compression.zstd.level': '-131072',
          'max.decompressed.message.bytes': '1',
        }),
      ),
    );
    assert.deepEqual(
      [
        accepted.compressionGzipLevel,
        accepted.compressionLz4Level,
        accepted.compressionZstdLevel,
        accepted.maxDecompressedMessageBytes,
      ],
      [9, 1, -131072, 1],
    );
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({ 'num.partitions': 'x', 'num.io.threads': '0', 'nope.nope': '1' });
    assert.equal(problems.length, 3, problems.join('\n'));
  });
});

describe('buildBrokerConfig: unknown and ignored keys', () => {
  it('rejects an unknown key, naming the nearest known or ignored key', () => {
    assertRejected(
      { 'num.partition': '3' },
      /^Unknown configuration "num\.partition" \(nearest known key: num\.partitions\)$/,
    );
    assertRejected({ 'log.dirz': '/x' }, /nearest known key: log\.dirs\)/);
    assertRejected({ 'advertised.listener': 'PLAINTEXT://h:1' }, /nearest known key: advertised\.listeners/);
    assertRejected({ 'log.retention.hour': '1' }, /nearest known key: log\.retention\.hours/);
    assertRejected({ 'write.caching': 'true' }, /nearest known key: write\.caching\.default/);
  });

  it('accepts ignored Kafka keys with one warning each', () => {
    const config = build({
      'process.roles': 'broker,controller',
      'zookeeper.connect': 'localhost:2181',
      'num.partitions': '2',
    });
    assert.equal(config.numPartitions, 2);
    // process.roles is a KRaft cluster key: its warning says this process is a cluster of its own.
    assert.deepEqual(config.warnings, [
      'Ignoring zookeeper.connect=localhost:2181: a Kafka broker setting that Skiff does not use',
      'Ignoring process.roles: KRaft wiring of a Kafka node; this Skiff process forms a cluster of its own (one node that is its own controller)',
    ]);
    assert.equal(config.values.has('process.roles'), false);
  });

  it("runs Kafka's own KRaft server.properties unchanged", () => {
    const config = buildBrokerConfig(parseProperties(KAFKA_KRAFT_SERVER_PROPERTIES));
    assert.equal(config.nodeId, 1);
    assert.deepEqual(config.listeners, [{ host: '0.0.0.0', port: 9092 }]);
    assert.deepEqual(config.advertisedListeners, [{ host: 'localhost', port: 9092 }]);
    assert.deepEqual(config.logDirs, ['/tmp/kraft-combined-logs']);
    assert.equal(config.numIoThreads, 8);
    // 12 ignored settings; process.roles and controller.quorum.voters share one warning.
    assert.equal(config.warnings.filter((w) => w.startsWith('Ignoring ')).length, 11, config.warnings.join('\n'));
  });

  it("runs Kafka's ZooKeeper-mode server.properties unchanged", () => {
    const config = buildBrokerConfig(parseProperties(KAFKA_ZK_SERVER_PROPERTIES));
    assert.equal(config.nodeId, 0);
    assert.deepEqual(config.logDirs, ['/tmp/kafka-logs']);
    assert.deepEqual(config.listeners, [{ host: '127.0.0.1', port: 9092 }]);
    assert.equal(config.warnings.length, 8, config.warnings.join('\n'));
  });
});

describe('buildBrokerConfig: Kafka 4.x files and cluster keys', () => {
  it("accepts the stock 4.x file's share-coordinator keys with a warning each", () => {
    const config = build({
      'share.coordinator.state.topic.replication.factor': '1',
      'share.coordinator.state.topic.min.isr': '1',
    });
    assert.equal(config.warnings.length, 2);
    assert.match(config.warnings[0]!, /^Ignoring share\.coordinator\.state\.topic\.replication\.factor=1: /);
    assert.match(config.warnings[1]!, /^Ignoring share\.coordinator\.state\.topic\.min\.isr=1: /);
  });

  it('gives the KRaft keys of a single combined node one warning: a cluster of its own', () => {
    const config = build({
      'process.roles': 'broker,controller',
      'node.id': '1',
      'controller.quorum.bootstrap.servers': 'localhost:9093',
    });
    assert.deepEqual(config.warnings, [
      'Ignoring process.roles, controller.quorum.bootstrap.servers: KRaft wiring of a Kafka node; this Skiff process forms a cluster of its own (one node that is its own controller)',
    ]);
  });

  it('says that no other node is joined when the keys name other nodes', () => {
    const voters = build({ 'controller.quorum.voters': '0@h0:9093,1@h1:9093,2@h2:9093' }).warnings;
    assert.equal(voters.length, 1);
    assert.match(voters[0]!, /controller\.quorum\.voters names 1@h1:9093, 2@h2:9093/);
    assert.match(
      voters[0]!,
      /forms a cluster of its own and joins no other node; to run several brokers, start them in one process with `skiff start --nodes N`/,
    );
    const brokerOnly = build({ 'process.roles': 'broker', 'controller.quorum.bootstrap.servers': 'c1:9093,c2:9093' });
    assert.match(brokerOnly.warnings[0]!, /process\.roles=broker leaves the controller role to other nodes/);
    assert.match(brokerOnly.warnings[0]!, /bootstrap\.servers lists 2 controllers/);
    assert.match(
      build({ 'controller.quorum.voters': '0@localhost:9093' }).warnings[0]!,
      /^Ignoring controller\.quorum\.voters: /,
      'a voter list of this node alone is a single node',
    );
  });

  it('starts from the whole stock Kafka 4.4 server.properties with warnings only', () => {
    let dir = __dirname;
    while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
    const props = parseProperties(fs.readFileSync(path.join(dir, 'test/fixtures/kafka-4.4-server.properties'), 'utf8'));
    const config = buildBrokerConfig(props);
    assert.equal(config.nodeId, 1);
    assert.deepEqual(config.listeners, [{ host: '0.0.0.0', port: 9092 }]);
    assert.ok(config.warnings.length > 0);
    assert.ok(config.warnings.every((w) => !/unknown/i.test(w)));
  });
});

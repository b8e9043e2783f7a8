/**
 * The group APIs at the wire level against an in-process broker: __consumer_offsets created at the
 * first FindCoordinator (50 partitions, compacted, internal), and the error codes clients rely on
 * (MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID, INVALID_GROUP_ID, UNKNOWN_TOPIC_OR_PARTITION on commits,
 * -1 for unknown offsets, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC), for the
 * versions old and new clients send. Also: clients may not produce to __consumer_offsets.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, ErrorCode } from '../../../src/protocol';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { Writer } from '../../../src/protocol/writer';
import { WireClient } from '../../helpers/wire-client';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

/** ConsumerProtocolSubscription v0 naming `topics`. */
function subscription(topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  w.arrayLength(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(null);
  return w.finish();
}

describe('group APIs on the wire', () => {
  let broker: TestBroker;
  let client: WireClient;

  before(async () => {
    broker = await startTestBroker({ 'group.initial.rebalance.delay.ms': '0' });
    client = await WireClient.connect(broker.port);
    const res = await client.request(ApiKey.CreateTopics, 4, {
      topics: [{ name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(res.body.topics[0].errorCode, ErrorCode.NONE);
  });

  after(async () => {
    client.close();
    await broker.stop();
    removeDir(broker.dataDir);
  });

  test('the first FindCoordinator creates __consumer_offsets: 50 compacted internal partitions; clients cannot produce to it', async () => {
    const found = await client.request(ApiKey.FindCoordinator, 3, { key: 'g-wire', keyType: 0 });
    assert.deepEqual([found.body.errorCode, found.body.nodeId, found.body.port], [ErrorCode.NONE, 0, broker.port]);
    const md = await client.request(ApiKey.Metadata, 9, {
      topics: [{ name: '__consumer_offsets' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    const topic = md.body.topics[0];
    assert.equal(topic.errorCode, ErrorCode.NONE);
    assert.equal(topic.isInternal, true);
    assert.equal(topic.partitions.length, 50);
    const configs = await client.request(ApiKey.DescribeConfigs, 1, {
      resources: [
        { resourceType: 2, resourceName: '__consumer_offsets', configurationKeys: ['cleanup.policy', 'segment.bytes'] },
      ],
      includeSynonyms: false,
    });
    assert.deepEqual(
      configs.body.results[0].configs.map((c: any) => [c.name, c.value]),
      [
        ['cleanup.policy', 'compact'],
        ['segment.bytes', '104857600'],
      ],
    );
    const records = buildRecordBatch([{ key: Buffer.from('k'), value: Buffer.from('v'), timestamp: Date.now() }]);
    const produced = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: '__consumer_offsets', partitionData: [{ index: 0, records }] }],
    });
    assert.equal(produced.body.responses[0].partitionResponses[0].errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  });

  test('JoinGroup: v4+ without a member id gets MEMBER_ID_REQUIRED with one; v2 joins at once; unknown ids and empty groups are refused', async () => {
    // A real client retries COORDINATOR_LOAD_IN_PROGRESS: the 50 coordinators load in the background
    // after the first FindCoordinator, and under load this group's may not have finished yet.
    const join = async (version: number, groupId: string, memberId: string) => {
      for (let attempt = 0; ; attempt++) {
        const res = await client.request(ApiKey.JoinGroup, version, {
          groupId,
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: subscription(['orders']) }],
          reason: null,
        });
        if (res.body.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || attempt >= 100) return res;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const first = await join(5, 'g-join', '');
    assert.equal(first.body.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    assert.match(first.body.memberId, /^wire-test-|^.+-[0-9a-f-]{36}$/);
    const joined = await join(5, 'g-join', first.body.memberId);
    assert.deepEqual(
      [joined.body.errorCode, joined.body.generationId, joined.body.leader, joined.body.protocolName],
      [ErrorCode.NONE, 1, first.body.memberId, 'range'],
    );
    assert.equal(joined.body.members.length, 1);
    const old = await join(2, 'g-join-v2', '');
    assert.deepEqual(
      [old.body.errorCode, old.body.generationId],
      [ErrorCode.NONE, 1],
      'JoinGroup v2 (kafka-python 2.0.2) has no KIP-394 round trip',
    );
    assert.equal((await join(5, 'g-none', 'made-up')).body.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await join(5, '', '')).body.errorCode, ErrorCode.INVALID_GROUP_ID);
    const sync = await client.request(ApiKey.SyncGroup, 3, {
      groupId: 'g-join',
      generationId: 1,
      memberId: first.body.memberId,
      groupInstanceId: null,
      assignments: [{ memberId: first.body.memberId, assignment: Buffer.from([0, 0]) }],
    });
    assert.deepEqual([sync.body.errorCode, [...sync.body.assignment]], [ErrorCode.NONE, [0, 0]]);
    const hb = await client.request(ApiKey.Heartbeat, 4, {
      groupId: 'g-join',
      generationId: 0,
      memberId: first.body.memberId,
      groupInstanceId: null,
    });
    assert.equal(hb.body.errorCode, ErrorCode.ILLEGAL_GENERATION);
    const described = await client.request(ApiKey.DescribeGroups, 5, {
      groups: ['g-join'],
      includeAuthorizedOperations: false,
    });
    const g = described.body.groups[0];
    assert.deepEqual(
      [g.errorCode, g.groupState, g.protocolType, g.protocolData, g.members.length],
      [ErrorCode.NONE, 'Stable', 'consumer', 'range', 1],
    );
    assert.equal(g.members[0].clientHost, '/127.0.0.1');
    const offsetDelete = await client.request(ApiKey.OffsetDelete, 0, {
      groupId: 'g-join',
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }] }],
    });
    assert.equal(offsetDelete.body.topics[0].partitions[0].errorCode, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
    const nonEmpty = await client.request(ApiKey.DeleteGroups, 2, { groupsNames: ['g-join'] });
    assert.equal(nonEmpty.body.results[0].errorCode, ErrorCode.NON_EMPTY_GROUP);
    const leave = await client.request(ApiKey.LeaveGroup, 1, { groupId: 'g-join', memberId: first.body.memberId });
    assert.equal(leave.body.errorCode, ErrorCode.NONE);
    const leaveAgain = await client.request(ApiKey.LeaveGroup, 1, { groupId: 'g-join', memberId: first.body.memberId });
    assert.equal(leaveAgain.body.errorCode, ErrorCode.UNKNOWN_MEMBER_ID, 'v0-2 carry the member error at the top');
    const listed = await client.request(ApiKey.ListGroups, 4, { statesFilter: ['Empty'] });
    assert.ok(
      listed.body.groups.some((x: any) => x.groupId === 'g-join' && x.groupState === 'Empty'),
      JSON.stringify(listed.body.groups),
    );
  });

  test('simple commits (generation -1) and offset fetches by version; unknown topics, groups and partitions', async () => {
    const commit = await client.request(ApiKey.OffsetCommit, 2, {
      groupId: 'g-simple',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      retentionTimeMs: -1,
      topics: [
        { name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 7, committedMetadata: 'meta' }] },
        { name: 'nope', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] },
      ],
    });
    assert.deepEqual(
      commit.body.topics.map((t: any) => [t.name, t.partitions[0].errorCode]),
      [
        ['orders', ErrorCode.NONE],
        ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    );
    const v1 = await client.request(ApiKey.OffsetFetch, 1, {
      groupId: 'g-simple',
      topics: [{ name: 'orders', partitionIndexes: [0, 1] }],
    });
    assert.deepEqual(
      v1.body.topics[0].partitions.map((p: any) => [p.partitionIndex, p.committedOffset, p.metadata, p.errorCode]),
      [
        [0, -1, '', 0],
        [1, 7, 'meta', 0],
      ],
    );
    const all = await client.request(ApiKey.OffsetFetch, 7, {
      groupId: 'g-simple',
      topics: null,
      requireStable: false,
    });
    assert.deepEqual(
      all.body.topics.map((t: any) => [t.name, t.partitions.map((p: any) => p.committedOffset)]),
      [['orders', [7]]],
    );
    const batched = await client.request(ApiKey.OffsetFetch, 8, {
      groups: [
        { groupId: 'g-simple', topics: null },
        { groupId: 'g-unknown', topics: [{ name: 'orders', partitionIndexes: [0] }] },
      ],
      requireStable: false,
    });
    assert.deepEqual(
      batched.body.groups.map((g: any) => [
        g.groupId,
        g.errorCode,
        g.topics.map((t: any) => t.partitions.map((p: any) => p.committedOffset)),
      ]),
      [
        ['g-simple', 0, [[7]]],
        ['g-unknown', 0, [[-1]]],
      ],
    );
    const topicId = (
      await client.request(ApiKey.Metadata, 12, {
        topics: [{ name: 'orders', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      })
    ).body.topics[0].topicId;
    const byId = await client.request(ApiKey.OffsetFetch, 10, {
      groups: [{ groupId: 'g-simple', memberId: null, memberEpoch: -1, topics: [{ topicId, partitionIndexes: [1] }] }],
      requireStable: false,
    });
    assert.deepEqual(
      [byId.body.groups[0].topics[0].topicId, byId.body.groups[0].topics[0].partitions[0].committedOffset],
      [topicId, 7],
    );
    const tooLarge = await client.request(ApiKey.OffsetCommit, 8, {
      groupId: 'g-simple',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: 'x'.repeat(5000) },
          ],
        },
      ],
    });
    assert.equal(tooLarge.body.topics[0].partitions[0].errorCode, ErrorCode.OFFSET_METADATA_TOO_LARGE);
    const deletedOffset = await client.request(ApiKey.OffsetDelete, 0, {
      groupId: 'g-simple',
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 1 }] }],
    });
    assert.deepEqual(
      [deletedOffset.body.errorCode, deletedOffset.body.topics[0].partitions[0].errorCode],
      [ErrorCode.NONE, ErrorCode.NONE],
    );
    const after = await client.request(ApiKey.OffsetFetch, 5, {
      groupId: 'g-simple',
      topics: [{ name: 'orders', partitionIndexes: [1] }],
    });
    assert.equal(after.body.topics[0].partitions[0].committedOffset, -1);
    const deleted = await client.request(ApiKey.DeleteGroups, 3, { groupsNames: ['g-simple', 'g-never'] });
    assert.deepEqual(
      deleted.body.results.map((r: any) => [r.groupId, r.errorCode]),
      [
        ['g-simple', ErrorCode.NONE],
        ['g-never', ErrorCode.GROUP_ID_NOT_FOUND],
      ],
    );
    assert.equal(deleted.body.results[1].errorMessage, 'Group g-never not found.');
    const v5 = await client.request(ApiKey.DescribeGroups, 5, {
      groups: ['g-never'],
      includeAuthorizedOperations: false,
    });
    assert.deepEqual([v5.body.groups[0].errorCode, v5.body.groups[0].groupState], [ErrorCode.NONE, 'Dead']);
    const v6 = await client.request(ApiKey.DescribeGroups, 6, {
      groups: ['g-never'],
      includeAuthorizedOperations: false,
    });
    assert.deepEqual(
      [v6.body.groups[0].errorCode, v6.body.groups[0].groupState],
      [ErrorCode.GROUP_ID_NOT_FOUND, 'Dead'],
    );
  });

  test("deleting a topic removes the groups' committed offsets for it (Kafka's onPartitionsDeleted): a topic created again starts fresh", async () => {
    const create = () =>
      client.request(ApiKey.CreateTopics, 4, {
        topics: [{ name: 'doomed', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 5000,
        validateOnly: false,
      });
    assert.equal((await create()).body.topics[0].errorCode, ErrorCode.NONE);
    const commit = await client.request(ApiKey.OffsetCommit, 2, {
      groupId: 'g-doomed',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      retentionTimeMs: -1,
      topics: [
        { name: 'doomed', partitions: [{ partitionIndex: 0, committedOffset: 31, committedMetadata: '' }] },
        { name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5, committedMetadata: '' }] },
      ],
    });
    assert.deepEqual(
      commit.body.topics.map((t: any) => t.partitions[0].errorCode),
      [ErrorCode.NONE, ErrorCode.NONE],
    );
    const deleted = await client.request(ApiKey.DeleteTopics, 4, { topicNames: ['doomed'], timeoutMs: 5000 });
    assert.equal(deleted.body.responses[0].errorCode, ErrorCode.NONE);
    assert.equal((await create()).body.topics[0].errorCode, ErrorCode.NONE);
    let offsets: any;
    for (let i = 0; i < 50; i++) {
      offsets = (
        await client.request(ApiKey.OffsetFetch, 7, { groupId: 'g-doomed', topics: null, requireStable: false })
      ).body.topics;
      if (!offsets.some((t: any) => t.name === 'doomed')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(
      offsets.map((t: any) => [t.name, t.partitions.map((p: any) => p.committedOffset)]),
      [['orders', [5]]],
      'only the surviving topic keeps its offset',
    );
  });
});

/**
 * franz-go's kgo integration tests against Skiff (kgo.test.ts): the pinned franz-go release, every
 * top-level test in its pkg/kgo that talks to a broker, which of them are out of scope for now and
 * why (transactions, share groups, KIP-848 next-generation groups), and which skip themselves
 * against Skiff. The classic consumer-group tests (TestGroupSimple, TestGroupETL, TestIssue523,
 * TestConsumeRegex) run since issue 5. Every broker test not listed as out of scope must
 * pass (or, if listed in EXPECTED_SKIPS, may skip). When bumping FRANZ_GO_VERSION (and the pin in
 * scripts/install-peers.sh, install_go_peers), kgo.test.ts's first test names any broker test
 * added or removed upstream.
 */

export const FRANZ_GO_MODULE = 'github.com/twmb/franz-go';
export const FRANZ_GO_VERSION = 'v1.22.3';

/**
 * Every top-level `func TestX(t *testing.T)` in pkg/kgo/*_test.go of FRANZ_GO_VERSION that reaches
 * a broker: its body (or the helper it calls) uses adm(), newTestClient/testClientOpts (KGO_SEEDS),
 * tmpTopic*, tmpGroup, tmpShareGroup, internalTopic or testChainETL. The other ~120 kgo tests are
 * unit tests (no broker) and are not run here.
 */
export const BROKER_TESTS: readonly string[] = [
  // client_test.go
  'TestIssue1034',
  'TestPing',
  'TestShareGroup',
  'TestUnknownGroupOffsetFetchPinned',
  // consumer_test.go
  'Test848RegexBrokerResolves',
  'TestAddRemovePartitions',
  'TestConsumeMaxDecompressBatchBytes',
  'TestConsumeRegex',
  'TestConsumeRegexShareSkipsInternal',
  'TestConsumeTopicRetrieval',
  'TestConsumeTopicRetrieval_Many',
  'TestDirectPartitionPurge',
  'TestGroupSimple',
  'TestHookPollStart',
  'TestIssue325',
  'TestIssue337',
  'TestIssue434',
  'TestIssue523',
  'TestIssue648',
  'TestIssue810',
  'TestIssue865',
  'TestIssueFetchLargerThanBrokerMaxReadBytes',
  'TestPauseIssue489',
  'TestPauseIssueOct2023',
  'TestPooling',
  // group_test.go
  'TestGroupETL',
  // produce_request_test.go
  'TestClient_Produce',
  'TestClient_ProduceLargeMessages',
  'TestIssue769',
  'TestIssue831',
  'TestIssueProduceBrokerTooOldFailsRecords',
  'TestIssueProduceSyncManualPartitionNegativeDoesNotPanic',
  // share_test.go
  'TestShareGroupAckOnClose',
  'TestShareGroupETL',
  'TestShareGroupOffsetsAdmin',
  // txn_test.go
  'TestTxnEtl',
];

const SHARE_GROUPS =
  'share groups (KIP-932: ShareGroupHeartbeat 76, ShareFetch 78, ShareAcknowledge 79, Kafka 4.2): not planned; ' +
  'the test skips itself unless ShareFetch v2 and ShareAcknowledge v2 are advertised';

/** Broker tests not run against Skiff for now, with the reason. */
export const OUT_OF_SCOPE: Readonly<Record<string, string>> = {
  Test848RegexBrokerResolves:
    'KIP-848 next-generation consumer groups (ConsumerGroupHeartbeat 68 v1+, broker-side regex ' +
    'resolution): not planned, Skiff serves the classic protocol; the test skips itself unless ConsumerGroupHeartbeat is advertised',
  TestTxnEtl:
    'transactions: InitProducerId with a transactional id is answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), and ' +
    'AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26), TxnOffsetCommit (28) are not served (transactions are ' +
    'their own issue)',
  TestShareGroup: SHARE_GROUPS,
  TestShareGroupAckOnClose: SHARE_GROUPS,
  TestShareGroupETL: SHARE_GROUPS,
  TestShareGroupOffsetsAdmin: SHARE_GROUPS,
  TestConsumeRegexShareSkipsInternal: SHARE_GROUPS,
};

/** Run tests that skip themselves against Skiff, with the reason (a pass is fine too). */
export const EXPECTED_SKIPS: Readonly<Record<string, string>> = {
  TestIssueProduceBrokerTooOldFailsRecords:
    'skips itself while the broker still takes Produce v2: Skiff serves Produce v0-v9, ' +
    'Kafka 4.x only v3+ (KIP-896 removed v0-v2)',
};

/** The broker tests kgo.test.ts runs: BROKER_TESTS less OUT_OF_SCOPE. */
export const SELECTED_TESTS: readonly string[] = BROKER_TESTS.filter((name) => !(name in OUT_OF_SCOPE));

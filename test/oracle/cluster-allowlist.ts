/**
 * Differences between a three-node Kafka and `skiff start --nodes 3` that cluster.long.test.ts
 * tolerates, each with its reason, as allowlist.ts does for one node: `deployment` (a fact of two
 * different deployments; these stay) and `gap` (Skiff differs and should not: pinned to the values
 * seen, delete the entry when Skiff is fixed).
 */
import type { AllowlistEntry } from './compare';

export const CLUSTER_ALLOWLIST: readonly (AllowlistEntry & { kind: 'deployment' | 'gap' })[] = [
  {
    id: 'controller-id',
    kind: 'deployment',
    scenario: 'metadata-rf3',
    path: /^controllerId$/,
    reason:
      "KRaft's Metadata names a random live broker as controllerId (clients cannot reach the quorum; any broker forwards admin requests), Skiff's names a broker too: any live broker id is right.",
    check: (kafka, skiff) =>
      typeof kafka === 'number' && typeof skiff === 'number' && [0, 1, 2].includes(kafka) && [0, 1, 2].includes(skiff),
  },
  {
    id: 'consumer-fetch-from-follower',
    kind: 'gap',
    scenario: 'leader-change-on-shutdown',
    path: /^fetchOnOldLeader$/,
    reason:
      "Kafka serves a consumer's Fetch v11+ on a follower up to that follower's HW (KIP-392: FetchParams.fetchOnlyLeader is false once the request carries client metadata, i.e. from v11), Skiff's follower answers NOT_LEADER_OR_FOLLOWER. Clients fetch from followers only when the leader names a preferred read replica (replica.selector.class), which Skiff never does, so real consumers do not notice.",
    check: (kafka, skiff) => kafka === 'NONE' && skiff === 'NOT_LEADER_OR_FOLLOWER',
  },
];

/**
 * DescribeLogDirs (API key 35), versions 0-5, flexible from 2. Written from Kafka's
 * DescribeLogDirsRequest.json and DescribeLogDirsResponse.json. The request is the same in all
 * versions (null `topics`: all topics); the response adds a top-level ErrorCode in v3 and
 * TotalBytes / UsableBytes per log dir in v4 (KIP-827; -1 unknown), and IsCordoned per log dir in
 * v5 (KIP-1066, Kafka 4.4: a cordoned dir takes no new partitions).
 *
 * One Skiff extension, not in Kafka's JSON: the response partition's tagged field FsyncedOffset
 * (tag {@link FSYNCED_OFFSET_TAG}, flexible versions 2+), the replica's recovery point. Kafka's
 * clients skip tagged fields they do not know (KIP-482; the protocol guide's TAGGED_FIELDS), so a
 * Kafka client reads this response as Kafka's; a Kafka broker never sends the tag, and it then
 * decodes as -1. test/conformance/schema-conformance.test.ts allowlists it by name.
 */
import type { MessageSpec, MessageValue } from './dsl';

/**
 * Tag of the Skiff-only DescribeLogDirs partition field FsyncedOffset: far above Kafka's own tags
 * (0, 1, ... per struct) so a future Kafka tagged field on the same struct does not collide with it.
 */
export const FSYNCED_OFFSET_TAG = 10000;

/** DescribeLogDirs request table (Kafka's DescribeLogDirsRequest.json). */
export const DescribeLogDirsRequest = {
  apiKey: 35,
  type: 'request',
  name: 'DescribeLogDirsRequest',
  validVersions: '0-5',
  flexibleVersions: '2+',
  fields: [
    {
      name: 'Topics',
      type: '[]DescribableLogDirTopic',
      versions: '0+',
      nullableVersions: '0+',
      about: 'null: all topics',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        { name: 'Partitions', type: '[]int32', versions: '0+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** DescribeLogDirs response table (Kafka's DescribeLogDirsResponse.json). */
export const DescribeLogDirsResponse = {
  apiKey: 35,
  type: 'response',
  name: 'DescribeLogDirsResponse',
  validVersions: '0-5',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    { name: 'ErrorCode', type: 'int16', versions: '3+', ignorable: true },
    {
      name: 'Results',
      type: '[]DescribeLogDirsResult',
      versions: '0+',
      fields: [
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'LogDir', type: 'string', versions: '0+' },
        {
          name: 'Topics',
          type: '[]DescribeLogDirsTopic',
          versions: '0+',
          fields: [
            { name: 'Name', type: 'string', versions: '0+' },
            {
              name: 'Partitions',
              type: '[]DescribeLogDirsPartition',
              versions: '0+',
              fields: [
                { name: 'PartitionIndex', type: 'int32', versions: '0+' },
                { name: 'PartitionSize', type: 'int64', versions: '0+' },
                { name: 'OffsetLag', type: 'int64', versions: '0+' },
                { name: 'IsFutureKey', type: 'bool', versions: '0+' },
                {
                  name: 'FsyncedOffset',
                  type: 'int64',
                  versions: '2+',
                  taggedVersions: '2+',
                  tag: FSYNCED_OFFSET_TAG,
                  ignorable: true,
                  default: -1,
                  about:
                    'Skiff extension (not in Kafka): every offset below it is fsynced (the recovery point); -1 unknown, and not sent',
                },
              ],
            },
          ],
        },
        { name: 'TotalBytes', type: 'int64', versions: '4+', ignorable: true, default: -1 },
        { name: 'UsableBytes', type: 'int64', versions: '4+', ignorable: true, default: -1 },
        { name: 'IsCordoned', type: 'bool', versions: '5+', ignorable: true, default: false },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded DescribeLogDirs request body. */
export type DescribeLogDirsRequestData = MessageValue<typeof DescribeLogDirsRequest>;
/** DescribeLogDirs response body. */
export type DescribeLogDirsResponseData = MessageValue<typeof DescribeLogDirsResponse>;

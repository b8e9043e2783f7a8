/**
 * GET /metrics over real HTTP against a fake ClusterView: the text parses as Prometheus's format, gauges
 * are read from the view at scrape time, and the counters count ISR changes and elections between
 * observed metadata images and the requests the dispatcher reported.
 */
import * as assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { startAdminServer, type AdminServer } from '../../../src/admin/admin-server';
import { AdminMetrics } from '../../../src/admin/admin-metrics';
import type { MetadataImage, PartitionState } from '../../../src/controller/metadata-records';
import { FakeClusterView, samplePartitions } from '../../helpers/fake-cluster-view';
import { parseMetrics, request, sampleValue, type Sample } from './http-client';

/** A metadata image at `offset` with topic `orders` (id t-1) holding `partitions`. */
function image(offset: number, partitions: PartitionState[]): MetadataImage {
  return {
    clusterId: 'c',
    controllerId: 3000,
    offset,
    controllerEpoch: 1,
    brokers: [0, 1, 2].map((nodeId) => ({
      nodeId,
      host: '127.0.0.1',
      port: 9092 + nodeId,
      brokerEpoch: 1,
      fenced: false,
    })),
    topics: [{ name: 'orders', topicId: 't-1', configs: {}, partitions }],
  };
}

function partition(p: number, leader: number, leaderEpoch: number, isr: number[]): PartitionState {
  return { partition: p, replicas: [0, 1, 2], isr, leader, leaderEpoch, partitionEpoch: leaderEpoch };
}

describe('admin metrics', () => {
  let server: AdminServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  async function scrape(port: number): Promise<Sample[]> {
    const reply = await request(port, 'GET', '/metrics');
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parseMetrics(reply.body);
  }

  test('gauges come from the view at scrape time: brokers, partitions, under-replicated, offline, offsets', async () => {
    const partitions = samplePartitions();
    partitions.push({
      topic: 'audit',
      partition: 0,
      leader: -1,
      leaderEpoch: 2,
      replicas: [2],
      isr: [2],
      offlineReplicas: [2],
      perReplica: [{ brokerId: 2, logEndOffset: -1, fsyncedOffset: -1, highWatermark: -1 }],
    });
    const view = new FakeClusterView(false, { partitions });
    view.brokerList[2]!.state = 'stopped';
    server = await startAdminServer(view, { port: 0 });
    let samples = await scrape(server.port);

    assert.equal(sampleValue(samples, 'skiff_brokers', { state: 'running' }), 2);
    assert.equal(sampleValue(samples, 'skiff_brokers', { state: 'fenced' }), 0);
    assert.equal(sampleValue(samples, 'skiff_brokers', { state: 'stopped' }), 1);
    assert.equal(sampleValue(samples, 'skiff_partitions'), 3);
    // orders-1 has ISR [1,0] of replicas [1,2,0]; audit-0 has no leader, so it is offline, not under-replicated.
    assert.equal(sampleValue(samples, 'skiff_under_replicated_partitions'), 1);
    assert.equal(sampleValue(samples, 'skiff_offline_partitions'), 1);
    assert.equal(sampleValue(samples, 'skiff_partition_leader_epoch', { topic: 'orders', partition: '1' }), 5);
    const replica = (broker: string) => ({ topic: 'orders', partition: '1', broker });
    assert.equal(sampleValue(samples, 'skiff_partition_log_end_offset', replica('1')), 7);
    assert.equal(sampleValue(samples, 'skiff_partition_fsynced_offset', replica('1')), 6);
    assert.equal(sampleValue(samples, 'skiff_partition_high_watermark', replica('0')), 5);
    assert.equal(
      sampleValue(samples, 'skiff_partition_log_end_offset', { topic: 'orders', partition: '0', broker: '2' }),
      10,
    );
    // Unknown offsets (-1) have no series.
    assert.equal(samples.filter((s) => s.labels.broker === '2' && s.labels.partition === '1').length, 0);
    assert.equal(samples.filter((s) => s.labels.topic === 'audit' && s.labels.broker !== undefined).length, 0);

    // The next scrape reads the view again: broker 2 caught up and rejoined the ISR; audit is gone.
    const orders1 = partitions[1]!;
    orders1.isr = [1, 0, 2];
    orders1.offlineReplicas = [];
    orders1.perReplica[1] = { brokerId: 2, logEndOffset: 7, fsyncedOffset: 7, highWatermark: 7 };
    view.partitionList = partitions.slice(0, 2);
    view.brokerList[2]!.state = 'running';
    samples = await scrape(server.port);
    assert.equal(sampleValue(samples, 'skiff_under_replicated_partitions'), 0);
    assert.equal(sampleValue(samples, 'skiff_offline_partitions'), 0);
    assert.equal(sampleValue(samples, 'skiff_brokers', { state: 'running' }), 3);
    assert.equal(sampleValue(samples, 'skiff_partition_log_end_offset', replica('2')), 7);
    assert.equal(samples.filter((s) => s.labels.topic === 'audit').length, 0, 'series of a deleted topic disappear');
  });

  test('ISR shrinks and expands and leader elections are counted between successive metadata images', async () => {
    const view = new FakeClusterView(false);
    server = await startAdminServer(view, { port: 0 });
    view.emitMetadata(image(10, [partition(0, 0, 1, [0, 1, 2]), partition(1, 1, 1, [1, 2, 0])])); // baseline
    let samples = await scrape(server.port);
    assert.equal(sampleValue(samples, 'skiff_isr_shrinks_total'), 0, 'the first image only sets the baseline');
    assert.equal(sampleValue(samples, 'skiff_isr_expands_total'), 0);
    assert.equal(sampleValue(samples, 'skiff_leader_elections_total'), 0);

    // Broker 0 crashes: out of both ISRs, and partition 0 (which it led) elects broker 1 at epoch 2.
    view.emitMetadata(image(11, [partition(0, 1, 2, [1, 2]), partition(1, 1, 1, [1, 2])]));
    samples = await scrape(server.port);
    assert.equal(sampleValue(samples, 'skiff_isr_shrinks_total'), 2);
    assert.equal(sampleValue(samples, 'skiff_isr_expands_total'), 0);
    assert.equal(sampleValue(samples, 'skiff_leader_elections_total'), 1);

    // A late, older image changes nothing; a new topic's partitions count nothing.
    view.emitMetadata(image(9, [partition(0, 0, 1, [0]), partition(1, 1, 1, [1])]));
    const withNewPartition = image(12, [partition(0, 1, 2, [1, 2]), partition(1, 1, 1, [1, 2])]);
    withNewPartition.topics.push({ name: 'new', topicId: 't-2', configs: {}, partitions: [partition(0, 2, 0, [2])] });
    view.emitMetadata(withNewPartition);
    samples = await scrape(server.port);
    assert.equal(sampleValue(samples, 'skiff_isr_shrinks_total'), 2);
    assert.equal(sampleValue(samples, 'skiff_leader_elections_total'), 1);

    // Broker 0 is back and caught up: it rejoins both ISRs; two coalesced elections on partition 1 (epoch 1 -> 3).
    view.emitMetadata(image(14, [partition(0, 1, 2, [1, 2, 0]), partition(1, 2, 3, [1, 2, 0])]));
    samples = await scrape(server.port);
    assert.equal(sampleValue(samples, 'skiff_isr_shrinks_total'), 2);
    assert.equal(sampleValue(samples, 'skiff_isr_expands_total'), 2);
    assert.equal(sampleValue(samples, 'skiff_leader_elections_total'), 3);
  });

  test('requests are counted per API and broker, with a latency histogram in seconds', async () => {
    const view = new FakeClusterView(false);
    server = await startAdminServer(view, { port: 0 });
    view.emitRequest({ apiKey: 0, apiName: 'Produce', apiVersion: 9, durationMs: 3, brokerId: 0 });
    view.emitRequest({ apiKey: 0, apiName: 'Produce', apiVersion: 9, durationMs: 30, brokerId: 0 });
    view.emitRequest({ apiKey: 1, apiName: 'Fetch', apiVersion: 13, durationMs: 700, brokerId: 1 });
    const samples = await scrape(server.port);
    const produce0 = { api: 'Produce', broker: '0' };
    assert.equal(sampleValue(samples, 'skiff_requests_total', produce0), 2);
    assert.equal(sampleValue(samples, 'skiff_requests_total', { api: 'Fetch', broker: '1' }), 1);
    assert.equal(sampleValue(samples, 'skiff_request_duration_seconds_count', produce0), 2);
    assert.ok(Math.abs(sampleValue(samples, 'skiff_request_duration_seconds_sum', produce0) - 0.033) < 1e-9);
    assert.equal(sampleValue(samples, 'skiff_request_duration_seconds_bucket', { ...produce0, le: '0.005' }), 1);
    assert.equal(sampleValue(samples, 'skiff_request_duration_seconds_bucket', { ...produce0, le: '0.05' }), 2);
    assert.equal(
      sampleValue(samples, 'skiff_request_duration_seconds_bucket', { api: 'Fetch', broker: '1', le: '0.5' }),
      0,
    );
    assert.equal(
      sampleValue(samples, 'skiff_request_duration_seconds_bucket', { api: 'Fetch', broker: '1', le: '1' }),
      1,
    );
  });

  test("responses' error codes are counted per API, Kafka's error name and broker", async () => {
    const view = new FakeClusterView(false);
    server = await startAdminServer(view, { port: 0 });
    const base = { apiKey: 0, apiName: 'Produce', apiVersion: 9, durationMs: 1, brokerId: 0 };
    view.emitRequest({ ...base, errorCounts: new Map([[2, 2]]) });
    view.emitRequest({
      ...base,
      errorCounts: new Map([
        [2, 1],
        [87, 1],
      ]),
    });
    view.emitRequest({ ...base, errorCounts: new Map() });
    const samples = await scrape(server.port);
    assert.equal(
      sampleValue(samples, 'skiff_request_errors_total', { api: 'Produce', error: 'CORRUPT_MESSAGE', broker: '0' }),
      3,
    );
    assert.equal(
      sampleValue(samples, 'skiff_request_errors_total', { api: 'Produce', error: 'INVALID_RECORD', broker: '0' }),
      1,
    );
    assert.equal(samples.filter((s) => s.name === 'skiff_request_errors_total').length, 2, 'no series for NONE');
  });

  test('each metrics object has a registry of its own', async () => {
    const a = new AdminMetrics();
    const b = new AdminMetrics();
    a.recordRequest({ apiKey: 3, apiName: 'Metadata', apiVersion: 12, durationMs: 1, brokerId: 0 });
    const view = new FakeClusterView(false);
    const textA = (await a.scrape(view)).text;
    const textB = (await b.scrape(view)).text;
    assert.equal(sampleValue(parseMetrics(textA), 'skiff_requests_total', { api: 'Metadata' }), 1);
    assert.equal(parseMetrics(textB).filter((s) => s.name === 'skiff_requests_total').length, 0);
  });
});

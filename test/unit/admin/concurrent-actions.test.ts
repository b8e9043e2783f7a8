/**
 * The admin API against a real two-broker cluster in process: crash, start and stop requests for one
 * broker that arrive together are taken one at a time; the others get 409, never a 500.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withTestCluster } from '../../helpers/in-process-broker';

test('three simultaneous starts of a crashed broker: one 200, two 409; the broker serves', async () => {
  await withTestCluster(2, { adminPort: 0, faultInjection: true }, async (cluster) => {
    const base = `http://127.0.0.1:${cluster.adminPort}`;
    const post = async (action: string) => {
      const response = await fetch(`${base}/v1/brokers/1/${action}`, { method: 'POST' });
      return { status: response.status, body: (await response.json()) as { error?: string } };
    };
    const crashes = await Promise.all([post('crash'), post('crash')]);
    assert.deepEqual(crashes.map((r) => r.status).sort(), [200, 409]);
    const starts = await Promise.all([post('start'), post('start'), post('start')]);
    assert.deepEqual(starts.map((r) => r.status).sort(), [200, 409, 409], JSON.stringify(starts.map((r) => r.body)));
    for (const refused of starts.filter((r) => r.status === 409)) assert.match(refused.body.error ?? '', /broker 1/);
    const brokers = (await (await fetch(`${base}/v1/brokers`)).json()) as { id: number; state: string }[];
    assert.deepEqual(
      brokers.map((b) => [b.id, b.state]),
      [
        [0, 'running'],
        [1, 'running'],
      ],
    );
  });
});

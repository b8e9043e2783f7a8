/** ProducerStateTable.truncateTo: the cut-back keeps dedup for the batches it kept (Kafka's rebuildProducerState). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProducerStateTable } from '../../../src/replica/producer-state';

describe('ProducerStateTable.truncateTo', () => {
  it('drops batches at or past the new LEO, keeps earlier ones, and forgets producers left with none', () => {
    const table = new ProducerStateTable();
    table.update(7, 0, 0, 0, 0, 100); // offset 0
    table.update(7, 0, 1, 1, 1, 101); // offset 1
    table.update(8, 0, 0, 0, 2, 102); // offset 2
    table.truncateTo(1);
    assert.deepEqual(table.check(7, 0, 0, 0), { kind: 'duplicate', baseOffset: 0, maxTimestampMs: 100 });
    assert.deepEqual(table.check(7, 0, 1, 1), { kind: 'append' }, 'the cut batch is appended again');
    assert.equal(table.check(7, 0, 2, 2).kind, 'error', 'the sequence still follows the kept batch');
    assert.deepEqual(table.check(8, 0, 5, 5), { kind: 'append' }, 'a producer with no batch left is unknown');
  });
});

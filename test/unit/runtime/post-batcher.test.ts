/**
 * PostBatcher (post-batcher.ts): what one turn posts crosses in one postMessage, in order, with every
 * transfer item; a lone message goes as itself; a new target flushes what the old one had queued.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PostBatcher, type PostTarget } from '../../../src/runtime/post-batcher';

type Msg = { k: 'a'; i: number } | { k: 'batch'; messages: Msg[] };

function recorder(): PostTarget<Msg> & { posts: Array<{ message: unknown; transfer: unknown[] }> } {
  const posts: Array<{ message: unknown; transfer: unknown[] }> = [];
  return { posts, postMessage: (message, transfer) => posts.push({ message, transfer: [...(transfer ?? [])] }) };
}

test('one turn of posts goes as one batch at its end, in order, with the transfer lists joined', async () => {
  const target = recorder();
  const batcher = new PostBatcher<Msg>();
  const bufs = [new ArrayBuffer(1), new ArrayBuffer(2)];
  batcher.post(target, { k: 'a', i: 0 }, [bufs[0]!]);
  batcher.post(target, { k: 'a', i: 1 });
  batcher.post(target, { k: 'a', i: 2 }, [bufs[1]!]);
  assert.equal(target.posts.length, 0, 'nothing is posted before the turn ends');
  await Promise.resolve();
  assert.deepEqual(target.posts, [
    {
      message: {
        k: 'batch',
        messages: [
          { k: 'a', i: 0 },
          { k: 'a', i: 1 },
          { k: 'a', i: 2 },
        ],
      },
      transfer: bufs,
    },
  ]);
});

test('a lone message is posted as itself; a turn later starts a new batch', async () => {
  const target = recorder();
  const batcher = new PostBatcher<Msg>();
  batcher.post(target, { k: 'a', i: 0 });
  await Promise.resolve();
  batcher.post(target, { k: 'a', i: 1 });
  await Promise.resolve();
  assert.deepEqual(
    target.posts.map((p) => p.message),
    [
      { k: 'a', i: 0 },
      { k: 'a', i: 1 },
    ],
  );
});

test('a message for another target flushes the first target queue first', async () => {
  const first = recorder();
  const second = recorder();
  const batcher = new PostBatcher<Msg>();
  batcher.post(first, { k: 'a', i: 0 });
  batcher.post(second, { k: 'a', i: 1 });
  assert.deepEqual(
    first.posts.map((p) => p.message),
    [{ k: 'a', i: 0 }],
  );
  await Promise.resolve();
  assert.deepEqual(
    second.posts.map((p) => p.message),
    [{ k: 'a', i: 1 }],
  );
});

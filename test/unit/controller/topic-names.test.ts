/**
 * Topic name validation (src/controller/topic-names.ts) against Kafka's Topic.validate: 1-249
 * characters of [a-zA-Z0-9._-], not "." or "..", with Kafka's messages. (The '.'/'_' collision check,
 * Topic.hasCollision, needs the existing topics and is tested through the controller's create-topics.)
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TOPIC_NAME_LENGTH, topicNameInvalidReason } from '../../../src/controller/topic-names';

describe('topic names', () => {
  test('the length limit is Kafka 249', () => {
    assert.equal(MAX_TOPIC_NAME_LENGTH, 249);
  });

  test('legal names: every allowed character class, one character, exactly 249 characters', () => {
    for (const name of [
      'a',
      'orders',
      'Orders-2024_v1.0',
      '__consumer_offsets',
      '...',
      '.a',
      '-',
      '_',
      '0123456789',
      'a'.repeat(249),
    ])
      assert.equal(topicNameInvalidReason(name), null, `${name.slice(0, 20)} (${name.length} chars) is legal`);
  });

  test('empty, null and undefined are illegal', () => {
    for (const name of ['', null, undefined])
      assert.equal(topicNameInvalidReason(name), "Topic name is illegal, it can't be empty");
  });

  test('"." and ".." are illegal', () => {
    for (const name of ['.', '..']) assert.equal(topicNameInvalidReason(name), 'Topic name cannot be "." or ".."');
  });

  test('250 characters is too long', () => {
    const name = 'a'.repeat(250);
    assert.equal(
      topicNameInvalidReason(name),
      `Topic name is illegal, it can't be longer than 249 characters, topic name: ${name}`,
    );
  });

  test('any character outside [a-zA-Z0-9._-] is illegal', () => {
    for (const name of ['a b', 'a/b', 'a\\b', 'a:b', 'a,b', 'a*', 'é', 'a\nb', 'tab\t', 'ünïcode', '٣', 'a+b', 'a@b'])
      assert.equal(
        topicNameInvalidReason(name),
        `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
        JSON.stringify(name),
      );
  });

  test('the length check comes before the character check, as in Kafka', () => {
    assert.match(topicNameInvalidReason(' '.repeat(250))!, /can't be longer than 249 characters/);
  });
});

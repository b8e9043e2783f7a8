/**
 * Kafka-style UUIDs: 16 random bytes shown as base64url without padding (22 characters), as Kafka's
 * Uuid.toString does. Like Kafka's Uuid.randomUuid, ids whose string starts with '-' and the reserved
 * zero and one ids are drawn again.
 */
import type { Random } from '../io/random';

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
export const ONE_UUID = 'AAAAAAAAAAAAAAAAAAAAAQ';

export function randomUuid(random: Random): string {
  for (;;) {
    const id = random.bytes16().toString('base64url');
    if (!id.startsWith('-') && id !== ZERO_UUID && id !== ONE_UUID) return id;
  }
}

/**
 * Kafka's topic name rules (Topic.validate in Kafka's clients): 1-249 characters of [a-zA-Z0-9._-],
 * and not "." or "..". Returns a reason string for INVALID_TOPIC_EXCEPTION, or null when valid.
 */
export const MAX_TOPIC_NAME_LENGTH = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

export function topicNameInvalidReason(name: string | null | undefined): string | null {
  if (name == null || name.length === 0) return "Topic name is illegal, it can't be empty";
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > MAX_TOPIC_NAME_LENGTH)
    return `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`;
  if (!LEGAL.test(name))
    return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return null;
}

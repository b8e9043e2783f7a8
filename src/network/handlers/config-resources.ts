/**
 * Shared pieces of the config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs):
 * Kafka's ConfigResource types and DescribeConfigs ConfigSource values, and the described config
 * entries of a topic or of this broker.
 */
import { BROKER_CONFIG_DEFS } from '../../config/broker-config';
import { CONFIG_TYPE, TOPIC_CONFIGS, topicConfigDefaults, topicConfigType } from '../../config/topic-config';
import type { TopicState } from '../../controller/metadata-records';
import type { BrokerContext } from '../broker-context';

/** ConfigResource.Type (Kafka's ConfigResource). */
export const ResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const;

/** DescribeConfigsResponse ConfigSource. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

export interface DescribedConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
  configType: number;
  documentation: string | null;
}

/**
 * Every topic config with its effective value and source: the topic's override
 * (DYNAMIC_TOPIC_CONFIG), else the broker setting it falls back to (STATIC_BROKER_CONFIG when set in
 * the broker's file or flags, DEFAULT_CONFIG otherwise). Synonyms list the chain, most specific first.
 */
export function describeTopicConfigs(
  topic: TopicState,
  broker: BrokerContext,
  keys: string[] | null,
  includeSynonyms: boolean,
): DescribedConfig[] {
  const defaults = topicConfigDefaults(broker.config);
  const names = Object.keys(TOPIC_CONFIGS).filter((name) => keys === null || keys.includes(name));
  return names.map((name) => {
    const brokerKey = TOPIC_CONFIGS[name]!.brokerKey;
    const brokerSource =
      brokerKey !== null && broker.config.sources.get(brokerKey) === 'STATIC_BROKER_CONFIG'
        ? ConfigSource.STATIC_BROKER_CONFIG
        : ConfigSource.DEFAULT_CONFIG;
    const override = topic.configs[name];
    const synonyms: DescribedConfig['synonyms'] = [];
    if (includeSynonyms) {
      if (override !== undefined) synonyms.push({ name, value: override, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
      if (brokerKey !== null) synonyms.push({ name: brokerKey, value: defaults[name] ?? null, source: brokerSource });
    }
    return {
      name,
      value: override ?? defaults[name] ?? null,
      readOnly: false,
      isDefault: override === undefined && brokerSource === ConfigSource.DEFAULT_CONFIG,
      configSource: override !== undefined ? ConfigSource.DYNAMIC_TOPIC_CONFIG : brokerSource,
      isSensitive: false,
      synonyms,
      configType: topicConfigType(name),
      documentation: null,
    };
  });
}

/** This broker's configs (all static here: Skiff has no dynamic broker configs yet). */
export function describeBrokerConfigs(
  broker: BrokerContext,
  keys: string[] | null,
  includeSynonyms: boolean,
): DescribedConfig[] {
  const types: Record<string, number> = {
    int: CONFIG_TYPE.INT,
    long: CONFIG_TYPE.LONG,
    boolean: CONFIG_TYPE.BOOLEAN,
    list: CONFIG_TYPE.LIST,
    listeners: CONFIG_TYPE.LIST,
    string: CONFIG_TYPE.STRING,
  };
  return BROKER_CONFIG_DEFS.filter(
    (def) => (keys === null || keys.includes(def.key)) && broker.config.values.has(def.key),
  ).map((def) => {
    const source =
      broker.config.sources.get(def.key) === 'STATIC_BROKER_CONFIG'
        ? ConfigSource.STATIC_BROKER_CONFIG
        : ConfigSource.DEFAULT_CONFIG;
    const value = broker.config.values.get(def.key) ?? null;
    return {
      name: def.key,
      value,
      readOnly: true,
      isDefault: source === ConfigSource.DEFAULT_CONFIG,
      configSource: source,
      isSensitive: false,
      synonyms: includeSynonyms ? [{ name: def.key, value, source }] : [],
      configType: types[def.type] ?? CONFIG_TYPE.UNKNOWN,
      documentation: def.doc,
    };
  });
}

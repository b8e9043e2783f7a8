/** franz-go's kgo integration tests against one Skiff broker, KGO_TEST_RF=1 (kgo-suite.ts). */
import { describeKgoSuite } from './kgo-suite';

describeKgoSuite({ nodes: 1, replicationFactor: 1 });

/**
 * franz-go's kgo integration tests against `skiff start --nodes 3` with KGO_TEST_RF=3 (issue 11):
 * the same selection and allowlist as against one broker (kgo-suite.ts), every test topic replicated
 * three ways. About 2 minutes on two loaded cores, compile cached.
 */
import { describeKgoSuite } from './kgo-suite';

describeKgoSuite({ nodes: 3, replicationFactor: 3 });

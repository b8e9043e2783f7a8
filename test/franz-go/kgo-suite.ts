/**
 * franz-go's own kgo integration tests (the peer's suite, from its module zip on the Go module
 * proxy) pointed at a real Skiff process: `go test ./pkg/kgo/ -run '^(selected)$' -json` in the
 * writable copy of the module that scripts/install-peers.sh (install_go_peers) leaves in
 * .cache/franz-go/<version>, with KGO_SEEDS=127.0.0.1:<port> and KGO_TEST_RF. Two files run it:
 * kgo.test.ts against one broker with KGO_TEST_RF=1, kgo-rf3.test.ts against `skiff start --nodes 3`
 * with KGO_TEST_RF=3 (every test topic has three replicas, so produce, consume and groups go
 * through replication: acks=all waits for the followers' HW). allowlist.ts names
 * the broker tests, the ones out of scope and why, and the ones that skip themselves; every other
 * broker test must pass. Each kgo test is reported as a test of its own here.
 * SKIFF_KGO_INCLUDE=TestTxnEtl,TestShareGroup also runs those out-of-scope tests and holds them to
 * pass (for work on transactions or share groups). SKIFF_KGO_TARGET=kafka runs the same selection
 * against the Kafka 4.4 fixture instead (test/helpers/kafka-fixture.ts): a check of the selection
 * and of the expectations themselves.
 *
 * The broker runs with write.caching.default=true (Kafka's behaviour: acks=all is answered once
 * the ISR has the batch in the page cache). With Skiff's default of an fsync per acks=all batch,
 * TestClient_Produce (20,000 ProduceSync calls from 50 goroutines to one partition) alone takes
 * about 35 s instead of 7 s.
 *
 * Go runs offline (GOPROXY=off, GOTOOLCHAIN=local) from the module and build caches under .cache/go,
 * which install_go_peers fills and warms, so the compile here is a cache hit.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { startKafka, type KafkaFixture } from '../helpers/kafka-fixture';
import { repoRoot } from '../compat/clients';
import { exitOnSignal } from '../helpers/exit-on-signal';
import {
  BROKER_TESTS,
  EXPECTED_SKIPS,
  FRANZ_GO_MODULE,
  FRANZ_GO_VERSION,
  OUT_OF_SCOPE,
  SELECTED_TESTS,
} from './allowlist';

const ROOT = repoRoot();
const GO_DIR = path.join(ROOT, '.cache', 'go');
/** The writable copy of the module (the module cache's own copy is read-only and shared). */
const MODULE_COPY = path.join(ROOT, '.cache', 'franz-go', FRANZ_GO_VERSION);
const KGO_DIR = path.join(MODULE_COPY, 'pkg', 'kgo');
/** go test's own time box: past it the test binary panics and prints every running test's stack. */
const GO_TEST_TIMEOUT_S = 150;
/** Out-of-scope tests to run anyway (comma-separated names in SKIFF_KGO_INCLUDE). */
const INCLUDED = new Set(
  (process.env.SKIFF_KGO_INCLUDE ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== ''),
);
const RUN_TESTS = BROKER_TESTS.filter((name) => SELECTED_TESTS.includes(name) || INCLUDED.has(name));
const INSTALL_HINT =
  'run `bash scripts/install-peers.sh` (install_go_peers downloads the module and warms the build cache)';

/** The go command: $GO, else `go` on PATH, else the usual /usr/local/go install. */
function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && fs.existsSync(path.join(dir, 'go'))) return path.join(dir, 'go');
  }
  return '/usr/local/go/bin/go';
}

/** The environment install_go_peers uses too: caches under .cache/go, nothing fetched. */
function goEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOPATH: GO_DIR,
    GOMODCACHE: path.join(GO_DIR, 'pkg', 'mod'),
    GOCACHE: path.join(GO_DIR, 'build'),
    GOFLAGS: '-modcacherw',
    GOTOOLCHAIN: 'local',
    GOPROXY: 'off',
    GOTELEMETRY: 'off',
    ...extra,
  };
}

/** One top-level kgo test as `go test -json` reported it. */
interface GoTestResult {
  action: 'pass' | 'fail' | 'skip' | 'unfinished';
  elapsedS: number;
  /** Its output lines (and its subtests'), without the RUN/PAUSE/CONT bookkeeping. */
  output: string[];
}

interface GoTestRun {
  results: Map<string, GoTestResult>;
  /** Output not attributed to a test (build errors, the timeout panic), and the exit status. */
  packageOutput: string[];
  exitCode: number | null;
  timedOut: boolean;
  elapsedMs: number;
}

/** Parses `go test -json` (test2json) events into per-top-level-test results. */
function parseGoTestJson(stdout: string): Pick<GoTestRun, 'results' | 'packageOutput'> {
  const results = new Map<string, GoTestResult>();
  const packageOutput: string[] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    let event: { Action?: string; Test?: string; Output?: string; Elapsed?: number };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      packageOutput.push(line); // a build error printed outside test2json
      continue;
    }
    if (event.Test === undefined) {
      if (event.Action === 'output' && event.Output !== undefined) packageOutput.push(event.Output.replace(/\n$/, ''));
      continue;
    }
    const top = event.Test.split('/')[0]!;
    let r = results.get(top);
    if (r === undefined) {
      r = { action: 'unfinished', elapsedS: 0, output: [] };
      results.set(top, r);
    }
    if (event.Action === 'output' && event.Output !== undefined && !/^=== (RUN|PAUSE|CONT|NAME)/.test(event.Output)) {
      r.output.push(event.Output.replace(/\n$/, ''));
    } else if (event.Test === top && (event.Action === 'pass' || event.Action === 'fail' || event.Action === 'skip')) {
      r.action = event.Action;
      r.elapsedS = event.Elapsed ?? 0;
    }
  }
  return { results, packageOutput };
}

/**
 * `go test ./pkg/kgo/ -run '^(tests)$' -count=1 -json` in the module copy. The process runs in a
 * group of its own so a hung run is ended with its test binary (go test's child).
 */
function runGoTests(tests: readonly string[], seeds: string, replicationFactor: number): Promise<GoTestRun> {
  const args = [
    'test',
    './pkg/kgo/',
    '-run',
    `^(${tests.join('|')})$`,
    '-count=1',
    '-json',
    '-vet=off',
    '-parallel',
    '4',
    '-timeout',
    `${GO_TEST_TIMEOUT_S}s`,
  ];
  const env = goEnv({ KGO_SEEDS: seeds, KGO_TEST_RF: String(replicationFactor), KGO_TEST_RECORDS: '5000' });
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(goBinary(), args, { cwd: MODULE_COPY, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.on('data', (c: string) => {
      stderr += c;
      if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19));
    });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        killGroup();
      },
      (GO_TEST_TIMEOUT_S + 60) * 1000,
    );
    exitOnSignal();
    process.once('exit', killGroup);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      process.removeListener('exit', killGroup);
      const parsed = parseGoTestJson(stdout);
      if (stderr.trim() !== '') parsed.packageOutput.push(...stderr.trimEnd().split('\n'));
      resolve({ ...parsed, exitCode: code, timedOut, elapsedMs: Date.now() - started });
    });
  });
}

/**
 * The top-level tests in pkg/kgo/*_test.go whose bodies reach a broker (the markers BROKER_TESTS
 * documents): a check that allowlist.ts still describes the pinned release.
 */
function scanBrokerTests(): string[] {
  const markers =
    /\b(adm\(\)|newTestClient\(|testClientOpts\(|getSeedBrokers\(|tmpTopic\w*\(|tmpNamedTopicPartitions\(|tmpGroup\(|tmpShareGroup\(|internalTopic\(|testChainETL\()/;
  const found: string[] = [];
  for (const file of fs
    .readdirSync(KGO_DIR)
    .filter((f) => f.endsWith('_test.go'))
    .sort()) {
    const lines = fs.readFileSync(path.join(KGO_DIR, file), 'utf8').split('\n');
    let current: string | null = null;
    let reaches = false;
    for (const line of lines) {
      const start = /^func (Test\w*)\(t \*testing\.T\) \{/.exec(line);
      if (start !== null) {
        current = start[1]!;
        reaches = false;
        continue;
      }
      if (current === null) continue;
      if (line === '}') {
        if (reaches) found.push(current);
        current = null;
        continue;
      }
      if (markers.test(line)) reaches = true;
    }
  }
  return found.sort();
}

/** The last `n` lines of `lines`, joined. */
function tail(lines: readonly string[], n: number): string {
  return (lines.length > n ? ['...', ...lines.slice(-n)] : lines).join('\n');
}

const ON_KAFKA = process.env.SKIFF_KGO_TARGET === 'kafka';

/** How one file runs the suite: against how many brokers, with which KGO_TEST_RF. */
export interface KgoSuiteOptions {
  /** `skiff start --nodes` (1: the single broker). */
  nodes: number;
  /** KGO_TEST_RF: the replication factor of every topic the kgo tests create (at most `nodes`). */
  replicationFactor: number;
}

/**
 * Declares the suite (module comment): the allowlist check, the go test run, one test per kgo test,
 * and with several brokers a check in the broker's log that the kgo tests' topics had
 * `replicationFactor` replicas.
 */
export function describeKgoSuite({ nodes, replicationFactor }: KgoSuiteOptions): void {
  assert.ok(replicationFactor >= 1 && replicationFactor <= nodes, 'KGO_TEST_RF fits the brokers');
  const target = ON_KAFKA
    ? 'the Kafka 4.4 fixture'
    : nodes === 1
      ? 'Skiff'
      : `Skiff --nodes ${nodes}, KGO_TEST_RF=${replicationFactor}`;
  describe(`franz-go ${FRANZ_GO_VERSION} kgo integration tests against ${target}`, () => {
    let broker: BrokerProcess | undefined;
    let kafka: KafkaFixture | undefined;
    let run: GoTestRun | undefined;
    let setupError: Error | undefined;

    before(
      async () => {
        try {
          if (!fs.existsSync(path.join(KGO_DIR, 'helpers_test.go'))) {
            throw new Error(`no copy of ${FRANZ_GO_MODULE}@${FRANZ_GO_VERSION} at ${MODULE_COPY}: ${INSTALL_HINT}`);
          }
          let seeds: string;
          if (ON_KAFKA) {
            kafka = await startKafka();
            seeds = kafka.bootstrap;
          } else {
            broker = await startBrokerProcess({
              overrides: { 'write.caching.default': 'true' },
              extraArgs: nodes === 1 ? [] : ['--nodes', String(nodes)],
              startTimeoutMs: 20_000 * nodes,
            });
            seeds = `127.0.0.1:${broker.port}`;
          }
          run = await runGoTests(RUN_TESTS, seeds, replicationFactor);
        } catch (e) {
          setupError = e as Error;
        }
      },
      { timeout: (GO_TEST_TIMEOUT_S + 120) * 1000 },
    );

    after(async () => {
      await broker?.stop();
      await kafka?.stop();
    });

    /** What went wrong around a failed kgo test: its output, go's own, and the broker's complaints. */
    function context(result: GoTestResult | undefined): string {
      const name = (r: GoTestResult): string =>
        [...(run?.results.entries() ?? [])].find(([, v]) => v === r)?.[0] ?? 'the test';
      const parts: string[] = [];
      if (result !== undefined) {
        // t.Log/t.Error lines are attributed to their test; the kgo clients' loggers write to the
        // binary's stderr (and testConsumer prints to stdout), which go test -json files under
        // whichever parallel test printed last.
        const own = result.output.filter((l) => /^\s+\w+_test\.go:\d+: |^\s*--- (FAIL|SKIP)/.test(l));
        parts.push(`--- ${name(result)} t.Log / t.Error lines ---\n${tail(own, 40)}`);
        const others = [...new Set(result.output.filter((l) => !own.includes(l)))];
        parts.push(`--- other lines printed meanwhile (client logs, from any parallel test) ---\n${tail(others, 15)}`);
      }
      if (run !== undefined && (result === undefined || result.action === 'unfinished')) {
        parts.push(
          `--- go test (exit ${run.exitCode}${run.timedOut ? ', killed' : ''}, ${Math.round(run.elapsedMs / 1000)} s) ---\n${tail(run.packageOutput, 40)}`,
        );
      }
      const complaints = (broker?.logs() ?? '')
        .split('\n')
        .filter((l) => /unsupported|unknown|closing connection|"level":(40|50)/.test(l));
      if (complaints.length > 0) parts.push(`--- broker warnings ---\n${tail(complaints, 20)}`);
      return parts.join('\n');
    }

    test('allowlist.ts names exactly the broker tests of the pinned kgo release', (t) => {
      if (!fs.existsSync(KGO_DIR)) assert.fail(`no ${KGO_DIR}: ${INSTALL_HINT}`);
      const scanned = scanBrokerTests();
      const listed = [...BROKER_TESTS].sort();
      assert.deepEqual(
        { added: scanned.filter((n) => !listed.includes(n)), removed: listed.filter((n) => !scanned.includes(n)) },
        { added: [], removed: [] },
        `pkg/kgo of ${FRANZ_GO_VERSION} vs allowlist.ts BROKER_TESTS`,
      );
      for (const name of [...Object.keys(OUT_OF_SCOPE), ...Object.keys(EXPECTED_SKIPS)]) {
        assert.ok(listed.includes(name), `allowlist.ts names ${name}, which is not a broker test`);
      }
      for (const name of INCLUDED)
        assert.ok(listed.includes(name), `SKIFF_KGO_INCLUDE names ${name}, which is not a broker test`);
      t.diagnostic(
        `${RUN_TESTS.length} of ${listed.length} broker tests run; out of scope: ${Object.keys(OUT_OF_SCOPE).join(', ')}`,
      );
    });

    test('go test ran to completion within its time box', (t) => {
      if (setupError !== undefined) throw setupError;
      assert.ok(run !== undefined);
      t.diagnostic(
        `go test: exit ${run.exitCode} after ${(run.elapsedMs / 1000).toFixed(1)} s; ` +
          `passed ${[...run.results.values()].filter((r) => r.action === 'pass').length}, failed ${[...run.results.values()].filter((r) => r.action === 'fail').length}`,
      );
      const unfinished = RUN_TESTS.filter((name) => (run!.results.get(name)?.action ?? 'unfinished') === 'unfinished');
      assert.ok(
        !run.timedOut && unfinished.length === 0,
        `go test did not finish every selected test (unfinished: ${unfinished.join(', ') || 'none'})\n${context(undefined)}`,
      );
    });

    if (nodes > 1 && !ON_KAFKA)
      test(`the kgo tests' topics were created with ${replicationFactor} replicas`, (t) => {
        if (setupError !== undefined) throw setupError;
        const created = (broker?.logs() ?? '')
          .split('\n')
          .filter((l) => l.includes('"created topic"'))
          .map((l) => JSON.parse(l) as { topic: string; replicationFactor: number })
          .filter((c) => !c.topic.startsWith('__'));
        assert.ok(created.length > 0, 'the broker logged the topics it created');
        assert.deepEqual(
          created.filter((c) => c.replicationFactor !== replicationFactor),
          [],
          `every topic has RF ${replicationFactor}`,
        );
        t.diagnostic(`${created.length} topics, each with ${replicationFactor} replicas`);
      });

    for (const name of BROKER_TESTS) {
      const outOfScope = OUT_OF_SCOPE[name];
      if (outOfScope !== undefined && !INCLUDED.has(name)) {
        test(`kgo ${name}`, { skip: `out of scope: ${outOfScope}` }, () => undefined);
        continue;
      }
      test(`kgo ${name}`, (t) => {
        if (setupError !== undefined) throw setupError;
        const result = run?.results.get(name);
        const action = result?.action ?? 'unfinished';
        if (action === 'skip') {
          const skipReason = EXPECTED_SKIPS[name];
          if (skipReason === undefined)
            assert.fail(`kgo ${name} skipped itself, and allowlist.ts does not expect it\n${context(result)}`);
          t.diagnostic(`skipped as expected: ${skipReason}`);
          return;
        }
        assert.equal(action, 'pass', `kgo ${name}: ${action}\n${context(result)}`);
        t.diagnostic(`${result!.elapsedS.toFixed(2)} s`);
      });
    }
  });
}

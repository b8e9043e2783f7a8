#!/usr/bin/env node
// Generates COMPATIBILITY.md (client x flow, pass/fail from real test results, plus the oracle and
// franz-go allowlists with their reasons).
//
//   npm run compat:table                       # build, run the client suites, write COMPATIBILITY.md (~6-8 min)
//   node scripts/compat-table.js --from FILE   # no run: read a saved spec-reporter output
//
// The run is `node scripts/run-tests.js compat/ tools/ franz-go/` (node's spec reporter); its output
// is saved to .cache/compat/spec.txt and parsed: each top-level suite is one test file, each test a
// case with its status (pass, fail, skip with its reason, todo = known gap). The allowlists are read
// from the compiled dist/test/{oracle,franz-go}/allowlist.js, so run `npm run build` first (the npm
// script does). Exits non-zero when the suites failed, after still writing the table (failures show
// as FAIL cells).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const repoRoot = path.join(__dirname, '..');
const outFile = path.join(repoRoot, 'COMPATIBILITY.md');
const savedSpec = path.join(repoRoot, '.cache', 'compat', 'spec.txt');
const SUITES = ['compat/', 'tools/', 'franz-go/'];

// ---- the spec reporter's output -> suites and cases ----

/** @returns {{ suites: Map<string, {name:string,status:string,reason:string}[]>, summary: Record<string,number> }} */
function parseSpec(text) {
  const suites = new Map();
  const summary = {};
  let current = null;
  const nestedSuites = new Set();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^\S*✖ failing tests:/.test(line)) break; // the reporter repeats failures at the end
    const info = /^ℹ (\w+) ([\d.]+)$/.exec(line);
    if (info) {
      summary[info[1]] = Number(info[2]);
      continue;
    }
    const top = /^▶ (.*)$/.exec(line);
    if (top) {
      current = top[1];
      nestedSuites.clear();
      if (!suites.has(current)) suites.set(current, []);
      continue;
    }
    // A describe inside a file's suite: its cases count for the file's suite, its own result line does not.
    const nested = /^ {2,}▶ (.*)$/.exec(line);
    if (nested) {
      nestedSuites.add(nested[1]);
      continue;
    }
    // A top-level result line ends a suite; a failing suite (e.g. its before hook) has no cases.
    const topResult = /^([✔✖﹣]) (.*?) \([\d.]+ms\)(?: # (.*))?$/.exec(line);
    if (topResult) {
      if (topResult[1] === '✖' && suites.has(topResult[2]) && suites.get(topResult[2]).length === 0) {
        suites.get(topResult[2]).push({ name: '(suite failed before its tests ran)', status: 'fail', reason: '' });
      }
      if (!suites.has(topResult[2]) && topResult[1] === '✖')
        suites.set(topResult[2], [{ name: '(file failed)', status: 'fail', reason: '' }]);
      current = null;
      continue;
    }
    const m = /^ {2,}([✔✖﹣]) (.*?) \([\d.]+ms\)(?: # (.*))?$/.exec(line);
    if (m && current !== null && !nestedSuites.has(m[2])) {
      let status = m[1] === '✔' ? 'pass' : m[1] === '✖' ? 'fail' : 'skip';
      if (m[1] === '✔' && m[3] !== undefined) status = 'todo'; // todo cases: a known gap, not a pass
      suites.get(current).push({ name: m[2], status, reason: m[3] ?? '' });
    }
  }
  return { suites, summary };
}

// ---- which cases speak for which client and flow ----

const FLOWS = ['produce', 'consume', 'groups', 'commit', 'admin', 'tools'];
/**
 * Where the groups and commit columns come from (test/compat/groups.test.ts, commits.test.ts and
 * the consumer-group block of java-clients.test.ts; their cases start with the client's name).
 */
const GROUPS_NOTE =
  'groups: two members of one group split a 6-partition topic, one leaves, the other resumes from its commits, a second group ' +
  'reads everything (test/compat/groups.test.ts, the Java consumer-group block of java-clients.test.ts). commit: offsets committed as a ' +
  'member, read back by the same and another client before and after a SIGKILL of the broker, and a new member resumes at them ' +
  "(test/compat/commits.test.ts; Java: commitSync). Kafka's tools: kafka-console-consumer --group, kafka-verifiable-consumer and " +
  'kafka-consumer-groups; franz-go: its own group tests (TestGroupSimple, TestGroupETL, ...).';
/** Suite names of the group suites (the target is part of the name: "(target: skiff)"). */
const GROUP_SUITE = /^consumer groups with real clients/;
const COMMIT_SUITE = /^committed offsets with real clients/;
const JAVA_GROUP_SUITE = /^Java kafka-clients 4\.x consumer groups/;

/**
 * Rules: suite (regex on the top-level suite name), test (regex on the case name, default all), flows.
 * A case counts toward a cell when a rule of that client matches it.
 */
const CLIENTS = [
  {
    name: 'kcat 1.7.1 (Debian, librdkafka 2.0.2)',
    rules: [
      { suite: /^kcat /, flows: ['produce', 'consume'] },
      { suite: /^compressed batches/, test: /^kcat /, flows: ['produce', 'consume'] },
      { suite: /^record timestamps/, test: /kcat -Q/, flows: ['consume'] },
      { suite: GROUP_SUITE, test: /^kcat -G/, flows: ['groups'] },
      { suite: COMMIT_SUITE, test: /^kcat -G/, flows: ['commit'] },
    ],
    notes: { admin: 'no admin API: topics are auto-created' },
  },
  {
    name: 'confluent-kafka 1.7.0 (Debian, librdkafka 2.0.2)',
    rules: [
      { suite: /^confluent-kafka 1\.7/, flows: ['produce', 'consume'] },
      { suite: /^confluent-kafka 1\.7/, test: /AdminClient/, flows: ['admin'] },
      { suite: /^compressed batches/, test: /^confluent-kafka /, flows: ['produce', 'consume'] },
      { suite: /^topic configs/, test: /confluent-kafka/, flows: ['admin'] },
      { suite: /^record timestamps/, test: /confluent-kafka|LogAppendTime/, flows: ['consume'] },
      { suite: GROUP_SUITE, test: /^confluent-kafka 1\.7/, flows: ['groups'] },
      { suite: COMMIT_SUITE, test: /^confluent-kafka 1\.7/, flows: ['commit'] },
    ],
  },
  {
    name: 'confluent-kafka 2.16.1 (PyPI, bundled librdkafka)',
    rules: [
      { suite: /^confluent-kafka from PyPI/, test: /^(?!the virtual environment)/, flows: ['produce', 'consume'] },
      { suite: /^confluent-kafka from PyPI/, test: /AdminClient/, flows: ['admin'] },
      { suite: GROUP_SUITE, test: /^confluent-kafka from PyPI/, flows: ['groups'] },
      { suite: COMMIT_SUITE, test: /^confluent-kafka from PyPI/, flows: ['commit'] },
    ],
  },
  {
    name: 'kafka-python 2.0.2 (Debian)',
    rules: [
      { suite: /^kafka-python 2\.0/, flows: ['produce', 'consume'] },
      { suite: /^kafka-python 2\.0/, test: /KafkaAdminClient/, flows: ['admin'] },
      { suite: /^compressed batches/, test: /^kafka-python /, flows: ['produce', 'consume'] },
      { suite: /^topic configs/, test: /kafka-python/, flows: ['admin'] },
      { suite: /^record timestamps/, test: /kafka-python|LogAppendTime/, flows: ['consume'] },
      { suite: GROUP_SUITE, test: /^kafka-python 2\.0/, flows: ['groups'] },
      { suite: COMMIT_SUITE, test: /^kafka-python 2\.0/, flows: ['commit'] },
    ],
  },
  {
    name: 'kafka-python 3.0.12 (PyPI)',
    rules: [
      { suite: /^kafka-python 3\.x from PyPI/, test: /^(?!the virtual environment)/, flows: ['produce', 'consume'] },
      { suite: /^kafka-python 3\.x from PyPI/, test: /KafkaAdminClient/, flows: ['admin'] },
      { suite: GROUP_SUITE, test: /^kafka-python 3\.x/, flows: ['groups'] },
      { suite: COMMIT_SUITE, test: /^kafka-python 3\.x/, flows: ['commit'] },
    ],
  },
  {
    name: 'kafkajs 2.2.4',
    rules: [
      { suite: /^kafkajs /, flows: ['produce'] },
      { suite: /^kafkajs /, test: /metadata and offsets/, flows: ['admin'] },
      { suite: /^compressed batches/, test: /^kafkajs /, flows: ['produce', 'consume'] },
      { suite: /^topic configs/, test: /kafkajs/, flows: ['admin'] },
      { suite: /^retention\.bytes/, test: /kafkajs/, flows: ['admin'] },
      { suite: GROUP_SUITE, test: /^kafkajs /, flows: ['groups', 'consume'] },
      { suite: COMMIT_SUITE, test: /^kafkajs: .*group\.initial\.rebalance\.delay/, flows: ['groups'] },
      { suite: COMMIT_SUITE, test: /^kafkajs 2/, flows: ['commit'] },
    ],
    notes: {
      consume: "the Consumer reads in groups (groups column); the other reads use kafkajs's low-level Broker.fetch",
    },
  },
  {
    name: 'Java kafka-clients 4.4.0',
    rules: [
      { suite: /^Java kafka-clients/, test: /producer|keyless record/, flows: ['produce'] },
      { suite: /^Java kafka-clients/, test: /consumer by assignment/, flows: ['consume'] },
      { suite: /^Java kafka-clients 4\.x against/, test: /AdminClient/, flows: ['admin'] },
      { suite: JAVA_GROUP_SUITE, test: /split 6 partitions|static membership/, flows: ['groups'] },
      { suite: JAVA_GROUP_SUITE, test: /commitSync/, flows: ['commit'] },
    ],
  },
  {
    name: "Kafka 4.4.0's tools",
    rules: [
      { suite: /^Kafka's own tools/, test: /producer/, flows: ['produce'] },
      { suite: /^Kafka's own tools/, test: /console-consumer/, flows: ['consume'] },
      { suite: /^Kafka's own tools/, test: /--group|VerifiableConsumer|kafka-consumer-groups/, flows: ['groups'] },
      { suite: /^Kafka's own tools/, test: /--group: a second run continues|VerifiableConsumer/, flows: ['commit'] },
      { suite: /^Kafka's own tools/, test: /kafka-topics|kafka-configs/, flows: ['admin'] },
      { suite: /^Kafka's own tools/, flows: ['tools'] },
    ],
    notes: { consume: 'kafka-console-consumer with --partition and with --group' },
  },
  {
    name: 'franz-go v1.22.3 (kgo integration tests)',
    rules: [
      { suite: /^franz-go /, test: /^kgo .*(Produce|Issue769|Issue831)/, flows: ['produce'] },
      { suite: /^franz-go /, test: /^kgo (?!.*(Produce|Issue769|Issue831))/, flows: ['consume'] },
      { suite: /^franz-go /, test: /^kgo TestAddRemovePartitions/, flows: ['admin'] },
      { suite: /^franz-go /, test: /^kgo (TestGroup|TestIssue523|TestConsumeRegex)/, flows: ['groups'] },
    ],
  },
];

/** Suites that check the broker rather than a client's flows. */
const BROKER_SUITES =
  /^(hostile input|max\.connections|connections\.max\.idle|retention\.bytes|record timestamps|topic configs|compressed batches)/;

function cellsFor(client, suites) {
  const cells = Object.fromEntries(FLOWS.map((f) => [f, []]));
  for (const [suite, cases] of suites) {
    for (const c of cases) {
      const flows = new Set();
      for (const rule of client.rules) {
        if (rule.suite.test(suite) && (rule.test === undefined || rule.test.test(c.name)))
          rule.flows.forEach((f) => flows.add(f));
      }
      for (const f of flows) cells[f].push({ suite, ...c });
    }
  }
  return cells;
}

function cellText(client, flow, cases) {
  const run = cases.filter((c) => c.status === 'pass' || c.status === 'fail');
  const failed = cases.filter((c) => c.status === 'fail').length;
  const todo = cases.filter((c) => c.status === 'todo').length;
  const note = client.notes?.[flow];
  if (run.length === 0) return note ? `— ${note}` : '—';
  let text = failed > 0 ? `**FAIL** (${failed}/${run.length} failed)` : `pass (${run.length})`;
  if (todo > 0) text += `, ${todo} known gap`;
  if (note) text += `; ${note}`;
  return text;
}

// ---- the allowlists ----

function loadAllowlists() {
  const oraclePath = path.join(repoRoot, 'dist', 'test', 'oracle', 'allowlist.js');
  const franzPath = path.join(repoRoot, 'dist', 'test', 'franz-go', 'allowlist.js');
  if (!fs.existsSync(oraclePath) || !fs.existsSync(franzPath))
    throw new Error('dist/test/*/allowlist.js missing: run `npm run build` first');
  return { oracle: require(oraclePath).ALLOWLIST, franz: require(franzPath) };
}

const md = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function render({ suites, summary }, meta) {
  const { oracle, franz } = loadAllowlists();
  const out = [];
  out.push('# Compatibility');
  out.push('');
  out.push(
    '<!-- Generated by scripts/compat-table.js (`npm run compat:table`) from a run of the client suites; do not edit by hand. -->',
  );
  out.push('');
  out.push(
    `Generated ${meta.date} from ${meta.source}: ` +
      `${summary.tests ?? '?'} tests, ${summary.pass ?? '?'} passed, ${summary.fail ?? '?'} failed, ${summary.skipped ?? 0} skipped, ` +
      `${summary.todo ?? 0} todo${summary.duration_ms ? `, ${Math.round(summary.duration_ms / 1000)} s` : ''}. ` +
      'Every client runs against a Skiff process on loopback; the suites are described in test/compat/README.md, ' +
      'test/tools/README.md and test/franz-go/allowlist.ts.',
  );
  out.push('');
  out.push(
    'A cell reads `pass (N)` when all N test cases that exercise that flow with that client passed, **FAIL** when one did ' +
      'not, `—` when no suite exercises it. "known gap" counts `todo` cases (a Kafka behaviour Skiff does not have yet).',
  );
  out.push('');
  out.push(`| client | ${FLOWS.join(' | ')} |`);
  out.push(`|---|${FLOWS.map(() => '---').join('|')}|`);
  const details = [];
  for (const client of CLIENTS) {
    const cells = cellsFor(client, suites);
    out.push(`| ${client.name} | ${FLOWS.map((f) => md(cellText(client, f, cells[f]))).join(' | ')} |`);
    const seen = new Map();
    for (const f of FLOWS)
      for (const c of cells[f]) {
        const key = `${c.suite}\u0000${c.name}`;
        if (!seen.has(key)) seen.set(key, { ...c, flows: [] });
        seen.get(key).flows.push(f);
      }
    details.push({ client, cases: [...seen.values()] });
  }
  out.push('');
  out.push(`**groups, commit.** ${GROUPS_NOTE}`);
  out.push('');
  out.push(
    "**tools** is Kafka's own CLI tool classes run from the jars (kafka-topics, kafka-console-producer/-consumer, kafka-configs, " +
      "kafka-producer-perf-test, kafka-verifiable-producer, kafka-dump-log on Skiff's segment files).",
  );
  out.push('');

  const brokerSuites = [...suites.keys()].filter((s) => BROKER_SUITES.test(s));
  out.push('## Broker feature suites');
  out.push('');
  out.push('These drive several clients at once (their cases also count in the table above where a client is named).');
  out.push('');
  out.push('| suite | cases | result |');
  out.push('|---|---:|---|');
  for (const s of brokerSuites) {
    const cases = suites.get(s);
    const failed = cases.filter((c) => c.status === 'fail').length;
    out.push(`| ${md(s)} | ${cases.length} | ${failed > 0 ? `**FAIL** (${failed})` : 'pass'} |`);
  }
  out.push('');

  out.push('## Known gaps found by the client suites');
  out.push('');
  const todos = [...suites.entries()].flatMap(([s, cases]) =>
    cases.filter((c) => c.status === 'todo').map((c) => ({ suite: s, ...c })),
  );
  if (todos.length === 0) out.push('None.');
  for (const t of todos) out.push(`- ${md(t.suite)}: ${md(t.name)} — ${md(t.reason)}`);
  out.push('');

  out.push('## franz-go allowlist (test/franz-go/allowlist.ts)');
  out.push('');
  out.push(
    `franz-go ${franz.FRANZ_GO_VERSION}: ${franz.BROKER_TESTS.length} kgo tests reach a broker; ${franz.SELECTED_TESTS.length} run against Skiff, ` +
      `${Object.keys(franz.OUT_OF_SCOPE).length} are out of scope for now:`,
  );
  out.push('');
  out.push('| kgo test | reason |');
  out.push('|---|---|');
  for (const [name, reason] of Object.entries(franz.OUT_OF_SCOPE)) out.push(`| ${name} | ${md(reason)} |`);
  for (const [name, reason] of Object.entries(franz.EXPECTED_SKIPS))
    out.push(`| ${name} (may skip itself) | ${md(reason)} |`);
  out.push('');

  out.push('## Differential suite allowlist (test/oracle/allowlist.ts)');
  out.push('');
  out.push(
    'The differential suite (test/oracle, `npm run test:oracle`) runs the same scenarios against Apache Kafka 4.4.0 and ' +
      'Skiff and fails on any difference not listed here. `deployment`: a fact of running two brokers (ids, ports, timing, ' +
      'features out of scope). `gap`: Skiff still differs from Kafka and should not.',
  );
  out.push('');
  out.push('| id | kind | scenario | reason |');
  out.push('|---|---|---|---|');
  for (const e of oracle) {
    const scenario =
      e.scenario === undefined ? 'all' : e.scenario instanceof RegExp ? `/${e.scenario.source}/` : e.scenario;
    out.push(`| ${e.id} | ${e.kind} | ${md(scenario)} | ${md(e.reason)} |`);
  }
  out.push('');

  out.push('## Test cases per client');
  out.push('');
  const icon = { pass: 'pass', fail: '**FAIL**', skip: 'skip', todo: 'todo' };
  for (const { client, cases } of details) {
    out.push(`<details><summary>${client.name}: ${cases.length} cases</summary>`);
    out.push('');
    for (const c of cases)
      out.push(
        `- ${icon[c.status]} [${c.status === 'skip' ? 'not run' : c.flows.join(', ')}] ${md(c.name)}${c.reason ? ` — ${md(c.reason)}` : ''}`,
      );
    out.push('');
    out.push('</details>');
    out.push('');
  }
  const skipped = [...suites.entries()].flatMap(([s, cases]) =>
    cases.filter((c) => c.status === 'skip').map((c) => ({ suite: s, ...c })),
  );
  if (skipped.length > 0) {
    out.push(
      `Skipped cases: ${skipped.length} (${skipped.map((c) => md(c.name)).join(', ')}); see the franz-go allowlist.`,
    );
    out.push('');
  }
  return out.join('\n');
}

function runSuites() {
  fs.mkdirSync(path.dirname(savedSpec), { recursive: true });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'run-tests.js'), ...SUITES], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      text += chunk.toString('utf8');
    });
    child.on('close', (code) => {
      fs.writeFileSync(savedSpec, text);
      resolve({ text, code });
    });
  });
}

async function main() {
  const i = process.argv.indexOf('--from');
  let text;
  let code = 0;
  let source;
  if (i >= 0) {
    const file = process.argv[i + 1];
    text = fs.readFileSync(file, 'utf8');
    // The file's name only: its directory is a path of the machine that ran the suites.
    source = `a saved run of the suites (${path.basename(file)})`;
  } else {
    ({ text, code } = await runSuites());
    source = `\`node scripts/run-tests.js ${SUITES.join(' ')}\``;
  }
  const parsed = parseSpec(text);
  if (parsed.suites.size === 0) throw new Error('no test suites found in the spec output');
  const date = new Date().toISOString().slice(0, 10);
  fs.writeFileSync(outFile, render(parsed, { date, source }) + '\n');
  const failed = [...parsed.suites.values()].flat().filter((c) => c.status === 'fail').length;
  console.log(
    `compat-table: wrote ${path.relative(repoRoot, outFile)} (${parsed.suites.size} suites, ${failed} failed cases)`,
  );
  process.exit(code !== 0 || failed > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(`compat-table: ${err.stack ?? err}`);
  process.exit(1);
});

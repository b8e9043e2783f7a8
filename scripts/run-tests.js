#!/usr/bin/env node
// Runs the compiled test suites (dist/test/**/*.test.js: unit, property, sim, compat, ...) with
// node's test runner and its spec reporter, then prints one plain summary line
// ("tests: N passed, N failed, N skipped"). Exits non-zero when any test fails or is cancelled.
//
// Usage: see USAGE below (`node scripts/run-tests.js --help`).
//
// An interrupted run cleans up after itself: the test runner runs in a process group of its own, and
// a SIGINT or SIGTERM to this script is passed to the whole group (test files turn it into an exit
// that SIGKILLs their brokers and fixtures, test/helpers/exit-on-signal.ts), then SIGKILLed after a
// grace period. Every test process gets TMPDIR set to one directory per run, removed at the end,
// so the temp dirs of a killed run go with it.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const USAGE = `Usage: node scripts/run-tests.js [--long] [substring...]

Runs the compiled test files (dist/test/**/*.test.js; build first: npm run build) with node's test
runner, two files at a time, and prints one summary line: "tests: N passed, N failed, N skipped".
Exits non-zero when any test fails or is cancelled.

  --long        also run the *.long.test.js campaigns (skipped by default)
  substring...  run only files whose compiled path contains one of them,
                e.g. unit/config, or unit/ property/ (what npm run test:unit runs)
  --help        print this and exit

Environment:
  SKIFF_TEST_FILE_TIMEOUT_MS  timeout per test file (default 5 min; 30 min with --long)
  SKIFF_TEST_KEEP_DATA=1      keep brokers' data dirs and the run's temp dir for a post-mortem
  SKIFF_TEST_ROOT             directory to search instead of dist/test (used by the script's own test)`;

const repoRoot = path.join(__dirname, '..');
const testRoot = process.env.SKIFF_TEST_ROOT
  ? path.resolve(process.env.SKIFF_TEST_ROOT)
  : path.join(repoRoot, 'dist', 'test');

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const unknownFlags = args.filter((arg) => arg.startsWith('-') && arg !== '--long');
if (unknownFlags.length > 0) {
  console.error(`run-tests: unknown option ${unknownFlags.join(', ')}\n\n${USAGE}`);
  process.exit(2);
}
const long = args.includes('--long');
const filters = args.filter((arg) => !arg.startsWith('--'));
const fileTimeoutMs = Number(process.env.SKIFF_TEST_FILE_TIMEOUT_MS) || (long ? 30 * 60_000 : 5 * 60_000);

/** Every *.test.js under `dir`, sorted for a stable order. */
function findTestFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTestFiles(full));
    else if (entry.isFile() && entry.name.endsWith('.test.js')) found.push(full);
  }
  return found.sort();
}

const files = findTestFiles(testRoot)
  .filter((file) => long || !file.endsWith('.long.test.js'))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)));

if (files.length === 0) {
  console.error(
    `run-tests: no test files found under ${path.relative(repoRoot, testRoot)}` +
      (filters.length > 0 ? ` matching ${filters.join(', ')}` : '') +
      ' (did `npm run build` run?)',
  );
  process.exit(1);
}

const nodeArgs = [
  '--test',
  '--test-reporter=spec',
  '--test-concurrency=2',
  `--test-timeout=${fileTimeoutMs}`,
  '--test-force-exit',
  ...files.map((file) => path.relative(repoRoot, file)),
];
const runTmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-run-'));
const child = spawn(process.execPath, nodeArgs, {
  cwd: repoRoot,
  stdio: ['inherit', 'pipe', 'inherit'],
  env: { ...process.env, TMPDIR: runTmpDir },
  detached: true, // a process group of its own: a signal reaches every test file, never this script twice
});

function removeRunTmpDir() {
  if (process.env.SKIFF_TEST_KEEP_DATA === '1') return;
  fs.rmSync(runTmpDir, { recursive: true, force: true });
}

/** Sends `signal` to the test runner's whole process group (test files and the brokers they spawned). */
function signalGroup(signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

const KILL_GRACE_MS = 10_000;
let interrupted = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted !== null) {
      signalGroup('SIGKILL');
      return;
    }
    interrupted = signal;
    console.error(`run-tests: ${signal}: stopping the test files and their brokers`);
    signalGroup('SIGTERM');
    setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS).unref();
  });
}

let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});

child.on('close', (code, signal) => {
  signalGroup('SIGKILL'); // anything a test file left running in the group
  removeRunTmpDir();
  if (interrupted !== null) {
    console.error(`run-tests: interrupted by ${interrupted}`);
    process.exit(interrupted === 'SIGINT' ? 130 : 143);
  }
  const count = (name) => {
    const matches = [...tail.matchAll(new RegExp(`^\\S* ?${name} (\\d+)$`, 'gm'))];
    return matches.length > 0 ? Number(matches[matches.length - 1][1]) : null;
  };
  const pass = count('pass');
  const failed = (count('fail') ?? 0) + (count('cancelled') ?? 0);
  const skipped = (count('skipped') ?? 0) + (count('todo') ?? 0);
  if (pass !== null) console.log(`tests: ${pass} passed, ${failed} failed, ${skipped} skipped`);
  if (signal !== null) console.error(`run-tests: test runner killed by ${signal}`);
  process.exit(code === 0 && failed === 0 ? 0 : code || 1);
});

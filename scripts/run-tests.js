#!/usr/bin/env node
// Runs the compiled test suites (dist/test/**/*.test.js: unit, property, sim, compat, ...) with
// node's test runner and its spec reporter, then prints one plain summary line
// ("tests: N passed, N failed, N skipped"). Exits non-zero when any test fails or is cancelled.
//
//   node scripts/run-tests.js [--long] [substring...]
//
// --long         also run *.long.test.js files (skipped by default)
// substring...   run only files whose path contains one of them, e.g. `npm test -- unit/config`
//
// Each test file gets a timeout (SKIFF_TEST_FILE_TIMEOUT_MS; default 5 min, 30 min with --long);
// --test-force-exit ends a file whose tests are done even if it left handles open.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const repoRoot = path.join(__dirname, '..');
const testRoot = path.join(repoRoot, 'dist', 'test');

const args = process.argv.slice(2);
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
const child = spawn(process.execPath, nodeArgs, { cwd: repoRoot, stdio: ['inherit', 'pipe', 'inherit'] });

let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});

child.on('close', (code, signal) => {
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

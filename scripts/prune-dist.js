#!/usr/bin/env node
// Removes compiled files in dist/ whose TypeScript source is gone (a renamed or moved module). tsc's
// incremental build never deletes outputs, and a stale dist/src/protocol/codec.js would shadow the
// codec/ folder that replaced codec.ts: Node resolves `./codec` to the file first. Run before every
// build (package.json "build"); a fresh clone has no dist/ and this does nothing.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const repoRoot = path.join(__dirname, '..');
const distRoot = path.join(repoRoot, 'dist');

/** The source a compiled file came from: dist/a/b.js (or .js.map) -> a/b.ts. */
function sourceOf(file) {
  const relative = path.relative(distRoot, file).replace(/\.js(\.map)?$/, '.ts');
  return path.join(repoRoot, relative);
}

function prune(dir) {
  if (!fs.existsSync(dir)) return 0;
  let removed = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) removed += prune(full);
    else if (/\.js(\.map)?$/.test(entry.name) && !fs.existsSync(sourceOf(full))) {
      fs.rmSync(full);
      removed++;
    }
  }
  return removed;
}

const removed = prune(distRoot);
if (removed > 0) console.error(`prune-dist: removed ${removed} compiled file(s) whose source is gone`);

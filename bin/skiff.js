#!/usr/bin/env node
// The `skiff` command: runs the compiled CLI in dist/ (built by `npm run build`).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const mainPath = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!fs.existsSync(mainPath)) {
  process.stderr.write(
    `skiff: ${path.relative(process.cwd(), mainPath) || mainPath} not found: run npm run build first\n`,
  );
  process.exit(1);
}
// `skiff start` ends with exit 0 on SIGINT/SIGTERM at any moment: hold them before the CLI loads
// (about 0.3 s), so Node's default action cannot kill the start (dist/src/cli/start-signals.js).
if (process.argv[2] === 'start')
  require(path.join(__dirname, '..', 'dist', 'src', 'cli', 'start-signals.js')).holdStartSignals();
require(mainPath)
  .main(process.argv.slice(2))
  .catch((err) => {
    process.stderr.write(`skiff: ${(err && err.stack) || String(err)}\n`);
    process.exit(1);
  });

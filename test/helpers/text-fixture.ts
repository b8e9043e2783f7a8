/**
 * The human-written text fixture (test/fixtures/text/README.md): about 11 MB of a Debian package
 * index, stored gzip-compressed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { packageRoot } from '../../src/verify/real/client-process';

/** Absolute path of the gzip-compressed fixture (found from the repo root, in src or dist layout). */
export const TEXT_FIXTURE_PATH = path.join(
  packageRoot(),
  'test',
  'fixtures',
  'text',
  'debian-bookworm-main-packages.txt.gz',
);

let cachedLines: string[] | null = null;

/**
 * The fixture's lines (UTF-8, split on `\n`, without a trailing empty line): 264,173 lines, about
 * 11 MB. Decompressed once per process; callers get a fresh array each time and may mutate it.
 */
export function loadTextFixtureLines(): string[] {
  if (cachedLines === null) {
    const text = zlib.gunzipSync(fs.readFileSync(TEXT_FIXTURE_PATH)).toString('utf8');
    const lines = text.split('\n');
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    cachedLines = lines;
  }
  return cachedLines.slice();
}

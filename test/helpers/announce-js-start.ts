/**
 * A `--require` preload for tests that signal a process "as soon as it runs": writes one line to
 * fd 3 (a pipe the test opened) when Node has finished its own bootstrap and starts user code,
 * right before the main script. A signal before that moment meets Node's default action, which no
 * JavaScript can change; from here on the script's own handling is what a test observes. Writes
 * nothing when fd 3 is not open.
 */
import * as fs from 'node:fs';

try {
  fs.writeSync(3, 'js-start\n');
} catch {
  // fd 3 not open: nobody is listening.
}

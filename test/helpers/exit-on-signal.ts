/**
 * Makes SIGINT and SIGTERM end a test process through `process.exit`, so the `exit` hooks the
 * helpers install (broker-process.ts, kafka-fixture.ts, in-process-broker.ts: SIGKILL the brokers and
 * fixtures still running, remove their data dirs) run when a test run is interrupted too. By default
 * Node dies on those signals without running `exit` listeners, which left brokers and temp dirs behind
 * after a Ctrl-C or a CI timeout. Exit codes follow the shell's 128 + signal number.
 */
let installed = false;

/** Installs the handlers once per process; later calls do nothing. */
export function exitOnSignal(): void {
  if (installed) return;
  installed = true;
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

/**
 * Module references: a module path (relative to the compiled `dist/src`) and an export name, which a
 * worker thread or a piscina thread can `require` itself. Actor kinds (registry.ts) and CPU jobs
 * (cpu-jobs.ts) are registered as these. A leaf of runtime/: it imports no actor types, so the actor
 * contract, the CPU jobs and the actor registry can all build on it without a file cycle.
 */
import * as path from 'node:path';

/**
 * Where an export lives. `module` is relative to the compiled `dist/src` directory (no extension), or an
 * absolute path (test fixtures). `export` names the exported function (or class, for a file system).
 */
export interface ModuleRef {
  module: string;
  export: string;
}

/** The compiled `dist/src` directory that relative module paths resolve against. */
export const distSrcDir: string = path.resolve(__dirname, '..');

/** Absolute path of a module reference (absolute paths pass through). */
export function resolveModulePath(module: string): string {
  return path.isAbsolute(module) ? module : path.join(distSrcDir, module);
}

/** Loads `ref` (require) and returns the named export; throws if the module or the export is missing. */
export function loadExport(ref: ModuleRef): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(resolveModulePath(ref.module)) as Record<string, unknown>;
  const value = loaded[ref.export];
  if (value === undefined) throw new Error(`module ${ref.module} has no export ${ref.export}`);
  return value;
}

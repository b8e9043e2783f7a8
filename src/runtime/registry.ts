/**
 * Actor kinds: the name a spawn uses, mapped to the module and export that build the actor. A kind is
 * a module reference, not a function, because a worker thread must load it itself:
 * `require(path.join(distSrcDir, module))[export](args)`.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { ActorFactory } from './actor';

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

/** The production actor kinds. Tests add theirs with {@link registerActorKind}. */
export const actorKinds: Record<string, ModuleRef> = {
  controller: { module: 'controller/controller-actor', export: 'createControllerActor' },
  replica: { module: 'replica/replica-actor', export: 'createReplicaActor' },
  'log-dir': { module: 'replica/log-dir-actor', export: 'createLogDirActor' },
  'group-coordinator': { module: 'group/group-coordinator-actor', export: 'createGroupCoordinatorActor' },
};

/**
 * Registers a kind (tests: give an absolute `module` path to compiled fixtures). Registering the same
 * reference twice is a no-op; a different reference under an existing name throws.
 */
export function registerActorKind(kind: string, ref: ModuleRef): void {
  const existing = actorKinds[kind];
  if (existing !== undefined) {
    assert(
      existing.module === ref.module && existing.export === ref.export,
      `actor kind ${kind} is already registered as ${existing.module}#${existing.export}`,
    );
    return;
  }
  actorKinds[kind] = { module: ref.module, export: ref.export };
}

/** The module reference of `kind`; throws an Error naming the kind if it is not registered. */
export function resolveActorKind(kind: string): ModuleRef {
  const ref = actorKinds[kind];
  if (ref === undefined) throw new Error(`unknown actor kind ${kind}`);
  return ref;
}

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

/** Loads an actor factory; throws if the export is not a function. */
export function loadActorFactory(ref: ModuleRef): ActorFactory {
  const factory = loadExport(ref);
  if (typeof factory !== 'function') throw new Error(`${ref.module}#${ref.export} is not a function`);
  return factory as ActorFactory;
}

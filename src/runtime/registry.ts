/**
 * Actor kinds: the name a spawn uses, mapped to the module and export that build the actor. A kind is
 * a module reference, not a function, because a worker thread must load it itself:
 * `require(path.join(distSrcDir, module))[export](args)` (module-ref.ts).
 */
import { strict as assert } from 'node:assert';
import type { ActorFactory } from './actor';
import { loadExport, type ModuleRef } from './module-ref';

/** The production actor kinds. Tests add theirs with {@link registerActorKind}. */
export const actorKinds: Record<string, ModuleRef> = {
  controller: { module: 'controller/controller-actor', export: 'createControllerActor' },
  replica: { module: 'replica/replica-actor', export: 'createReplicaActor' },
  'log-dir': { module: 'replica/log-dir-actor', export: 'createLogDirActor' },
  'group-coordinator': { module: 'group/group-coordinator-actor', export: 'createGroupCoordinatorActor' },
  'replica-manager': { module: 'replica-manager/replica-manager-actor', export: 'createReplicaManagerActor' },
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

/** Loads an actor factory; throws if the export is not a function. */
export function loadActorFactory(ref: ModuleRef): ActorFactory {
  const factory = loadExport(ref);
  if (typeof factory !== 'function') throw new Error(`${ref.module}#${ref.export} is not a function`);
  return factory as ActorFactory;
}

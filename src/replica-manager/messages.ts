/**
 * The replica manager actor's messages (replica-manager-actor.ts): what its replicas ask of it
 * ({@link ReplicaHostMessages}, declared in replica/ because a replica may not import this layer), the
 * controller's metadata pushes ({@link MetadataListenerMessages}), and what the broker's network
 * layer and the cluster wiring ask of it. Also what it pushes to its broker's network endpoint
 * ({@link NetworkNodeMessages}).
 */
import { actorRef } from '../runtime/actor';
import type { ActorRef } from '../runtime/actor';
import type { MetadataListenerMessages } from '../controller/messages';
import type { ReplicaHostMessages } from '../replica/messages';

/** A partition this broker should host whose replica (or group coordinator) could not start on the disk. */
export interface OfflinePartition {
  topic: string;
  partition: number;
  /** What the disk said, e.g. `ENOSPC: no space left on device, write`. */
  reason: string;
}

/**
 * What the manager tells its broker's network layer after every applied image and every change of
 * its local state: the metadata offset it has applied, the partitions offline here, and the
 * __consumer_offsets partitions whose group coordinator is running here (loaded or loading).
 */
export interface LocalBrokerState {
  appliedOffset: number;
  brokerEpoch: number;
  offline: OfflinePartition[];
  coordinators: number[];
  /**
   * The manager numbers every state it hands out (a push or an `await-applied` reply) 1, 2, ... in
   * its incarnation. With `brokerEpoch` it orders them: an incarnation's epoch never goes down and
   * the next incarnation registers with a higher one, so the network layer takes a state only when
   * (brokerEpoch, version) is past the one it holds. A push delayed behind a newer state (a reply, or
   * a later push) would otherwise take back what the newer one said, e.g. a running coordinator.
   */
  version: number;
}

/** A partition hosted by this broker and where its directory is (DescribeLogDirs). */
export interface HostedPartition {
  topic: string;
  partition: number;
  topicId: string;
  logDir: string;
}

/** Replica manager message kind -> body and reply. */
export type ReplicaManagerMessages = ReplicaHostMessages &
  MetadataListenerMessages & {
    /**
     * Answered once the manager has applied an image at least as new as `offset` (its replicas and
     * coordinators started or stopped), with its local state; answered at once if it already has.
     */
    'replica-manager.await-applied': { body: { offset: number }; reply: LocalBrokerState };
    /** The partitions this broker hosts and their log dirs. */
    'replica-manager.hosted': { body: Record<string, never>; reply: { partitions: HostedPartition[] } };
    /**
     * Stops this broker's actors in order (group coordinators, replicas with their final flush and
     * checkpoint, log-dir actors). `controlled`: first ask the controller to move leadership away
     * (controlled shutdown, bounded by `timeoutMs`). Answered when done; the manager then exits.
     */
    'replica-manager.shutdown': { body: { controlled: boolean; timeoutMs: number }; reply: Record<string, never> };
  };

/** What the replica manager pushes to its broker's network endpoint (`net/<brokerId>`). */
export type NetworkNodeMessages = MetadataListenerMessages & {
  'net.local-state': { body: LocalBrokerState; reply: void };
};

/** The id of broker `brokerId`'s replica manager, typed with its whole message map. */
export function replicaManagerRef(brokerId: number): ActorRef<ReplicaManagerMessages> {
  return actorRef<ReplicaManagerMessages>(`replica-manager/${brokerId}`);
}

/** The id of broker `brokerId`'s network endpoint. */
export function networkNodeRef(brokerId: number): ActorRef<NetworkNodeMessages> {
  return actorRef<NetworkNodeMessages>(`net/${brokerId}`);
}

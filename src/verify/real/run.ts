/**
 * `skiff verify --bootstrap`: real clients (librdkafka and the Java client) against any
 * Kafka-compatible broker while faults are caused from outside, checked from what the clients saw.
 */
import type { FaultKind, VerifyReport } from '../report';

/** How a real run causes faults: Skiff's admin API, the user's commands, or none. */
export type FaultDriver =
  | { kind: 'none' }
  /** Skiff started with --fault-injection: crash, stop and start brokers through its admin API. */
  | { kind: 'skiff-admin'; adminUrl: string }
  /** Shell commands; `{broker}` in them is replaced by the broker id to kill or start. */
  | { kind: 'commands'; killCommand: string; startCommand: string; brokers: number[] };

/** Options of {@link runRealVerify}. */
export interface RealVerifyOptions {
  /** host:port[,host:port...] */
  bootstrap: string;
  /** The workload's length in seconds (bounded: the run ends by itself). */
  durationS: number;
  /** Which real clients drive the workload. */
  clients: ('librdkafka' | 'java')[];
  faults: FaultDriver;
  /** The fault kinds to cause (of those the driver can). */
  faultKinds: FaultKind[];
  /** Seed of the fault schedule (which broker, when). */
  seed: number;
  /** Topic name prefix; each run creates fresh topics. */
  topicPrefix: string;
  replicationFactor: number;
}

/** Where a real run writes its progress (the report itself is returned). */
export interface RealVerifyIo {
  progress(line: string): void;
}

/** Runs the real-client workload against `options.bootstrap` and checks what the clients saw. */
export async function runRealVerify(options: RealVerifyOptions, io: RealVerifyIo): Promise<VerifyReport> {
  void options;
  void io;
  throw new Error('skiff verify --bootstrap is being built (issue 12 item 7)');
}

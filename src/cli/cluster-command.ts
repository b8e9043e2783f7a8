/**
 * `skiff cluster status|crash ID|start ID|stop ID [--admin HOST:PORT]`: the admin HTTP API (src/admin/) from
 * the command line, as `rpk cluster` drives Redpanda's. `status` prints the brokers, then the
 * partitions (leader, leader epoch, replicas, ISR, offline replicas), then each replica's log-end
 * offset, fsynced offset and high watermark; `crash`, `start` and `stop` (a clean, controlled
 * shutdown of one broker) POST to `/v1/brokers/{id}/crash|start|stop` (the broker must run with
 * `--fault-injection`) and print the broker's new state.
 *
 * The address is `--admin`, else SKIFF_ADMIN, else 127.0.0.1:9644. Exit codes as the other client
 * commands: 0 done, 1 the server refused (its JSON error printed as `skiff: <error>`) or could not be
 * reached (a refused connection names the address and says how to start the API), 2 usage errors.
 */
import * as http from 'node:http';
import { Command, InvalidArgumentError } from 'commander';
import { ADMIN_HOST, DEFAULT_ADMIN_PORT } from '../admin/admin-defaults';
import type { BrokerAction, BrokerInfo, PartitionInfo } from '../admin/cluster-view';
import { EXIT_FAILURE, formatTable, type CliIo, type ClientCommandRun } from './client-io';

/** The admin address when neither `--admin` nor SKIFF_ADMIN gives one. */
export const DEFAULT_ADMIN_ADDRESS = `${ADMIN_HOST}:${DEFAULT_ADMIN_PORT}`;

/** How long one admin request may take: a start recovers the broker's logs before it answers. */
const REQUEST_TIMEOUT_MS = 120_000;

/** An admin API address, `host:port` (an IPv6 host in brackets). */
export interface AdminAddress {
  host: string;
  port: number;
}

/** The admin API could not be reached or answered with an error: `message` is the line to print. */
export class AdminRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminRequestError';
  }
}

/** Adds `skiff cluster status|crash|start|stop`; `setRun` receives the command to run (args.ts runs nothing itself). */
export function registerClusterCommands(program: Command, setRun: (run: ClientCommandRun) => void): void {
  const cluster = program
    .command('cluster')
    .description('show brokers, partitions and replicas; crash, start and stop brokers (the admin HTTP API)');
  const run = (admin: string | undefined, fn: (address: AdminAddress, io: CliIo) => Promise<number>): void =>
    setRun((io) => runAgainst(resolveAdmin(admin, io.env), io, fn));
  adminOption(cluster.command('status'))
    .description('brokers (state, epoch), partitions (leader, epoch, replicas, ISR) and per replica LEO, fsynced, HW')
    .action((o: AdminOption) => run(o.admin, (address, io) => clusterStatus(address, io)));
  adminOption(cluster.command('crash'))
    .description('crash a broker as a killed process would (the broker must run with --fault-injection)')
    .argument('<id>', 'broker (node) id', parseBrokerId)
    .action((id: number, o: AdminOption) => run(o.admin, (address, io) => clusterAction(address, 'crash', id, io)));
  adminOption(cluster.command('start'))
    .description('start a crashed broker again: same port, logs recovered (needs --fault-injection)')
    .argument('<id>', 'broker (node) id', parseBrokerId)
    .action((id: number, o: AdminOption) => run(o.admin, (address, io) => clusterAction(address, 'start', id, io)));
  adminOption(cluster.command('stop'))
    .description('stop a broker cleanly: its leaderships move away first, then it shuts down (needs --fault-injection)')
    .argument('<id>', 'broker (node) id', parseBrokerId)
    .action((id: number, o: AdminOption) => run(o.admin, (address, io) => clusterAction(address, 'stop', id, io)));
}

interface AdminOption {
  admin?: string;
}

/** The admin address for a command: `--admin`, else SKIFF_ADMIN, else {@link DEFAULT_ADMIN_ADDRESS}. */
export function resolveAdmin(option: string | undefined, env: NodeJS.ProcessEnv): string {
  return option ?? (env.SKIFF_ADMIN !== undefined && env.SKIFF_ADMIN !== '' ? env.SKIFF_ADMIN : DEFAULT_ADMIN_ADDRESS);
}

/** Parses `host:port` (`[v6]:port` too); throws RangeError naming what is wrong. */
export function parseAdminAddress(text: string): AdminAddress {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !(port >= 1 && port <= 65535))
    throw new RangeError(
      `bad admin address ${JSON.stringify(text)}: expected HOST:PORT, e.g. ${DEFAULT_ADMIN_ADDRESS}`,
    );
  return { host: m[1] ?? m[2]!, port };
}

function adminOption(command: Command): Command {
  return command.option(
    '--admin <host:port>',
    `the admin API (default: $SKIFF_ADMIN or ${DEFAULT_ADMIN_ADDRESS}; skiff start --admin-port sets its port)`,
  );
}

/** Runs `fn` against the parsed address; an {@link AdminRequestError} (or a bad address) is printed, exit 1. */
async function runAgainst(
  address: string,
  io: CliIo,
  fn: (address: AdminAddress, io: CliIo) => Promise<number>,
): Promise<number> {
  try {
    return await fn(parseAdminAddress(address), io);
  } catch (err) {
    if (err instanceof AdminRequestError || err instanceof RangeError) {
      io.err(`skiff: ${err.message}`);
      return EXIT_FAILURE;
    }
    throw err;
  }
}

/** `skiff cluster status`: the brokers table, the partitions table and the replicas table. */
export async function clusterStatus(address: AdminAddress, io: CliIo): Promise<number> {
  const brokers = (await adminRequest(address, 'GET', '/v1/brokers')) as BrokerInfo[];
  const partitions = (await adminRequest(address, 'GET', '/v1/partitions')) as PartitionInfo[];
  const lines = formatTable([
    ['BROKER', 'HOST', 'PORT', 'STATE', 'EPOCH'],
    ...brokers.map((b) => [b.id, b.host, b.port, b.state, b.brokerEpoch]),
  ]);
  lines.push('');
  lines.push(
    ...formatTable([
      ['TOPIC', 'PARTITION', 'LEADER', 'EPOCH', 'REPLICAS', 'ISR', 'OFFLINE'],
      ...partitions.map((p) => [
        p.topic,
        p.partition,
        p.leader === -1 ? 'none' : p.leader,
        p.leaderEpoch,
        idList(p.replicas),
        idList(p.isr),
        idList(p.offlineReplicas),
      ]),
    ]),
  );
  lines.push('');
  const replicaRows: Array<Array<string | number>> = [
    ['TOPIC', 'PARTITION', 'REPLICA', 'ROLE', 'LEO', 'FSYNCED', 'HW'],
  ];
  for (const p of partitions)
    for (const r of p.perReplica)
      replicaRows.push([
        p.topic,
        p.partition,
        r.brokerId,
        replicaRole(p, r.brokerId),
        offset(r.logEndOffset),
        offset(r.fsyncedOffset),
        offset(r.highWatermark),
      ]);
  lines.push(...formatTable(replicaRows));
  await io.out(lines.join('\n') + '\n');
  return 0;
}

/** `skiff cluster crash|start|stop ID`: one line, `broker ID: STATE (HOST:PORT, epoch N)`. */
export async function clusterAction(
  address: AdminAddress,
  action: BrokerAction,
  id: number,
  io: CliIo,
): Promise<number> {
  const broker = (await adminRequest(address, 'POST', `/v1/brokers/${id}/${action}`)) as BrokerInfo;
  await io.out(`broker ${broker.id}: ${broker.state} (${broker.host}:${broker.port}, epoch ${broker.brokerEpoch})\n`);
  return 0;
}

/** `leader`, `in-sync`, `offline` (its broker is down) or `out-of-sync`. */
function replicaRole(p: PartitionInfo, brokerId: number): string {
  if (p.leader === brokerId) return 'leader';
  if (p.offlineReplicas.includes(brokerId)) return 'offline';
  return p.isr.includes(brokerId) ? 'in-sync' : 'out-of-sync';
}

function idList(ids: readonly number[]): string {
  return `[${ids.join(',')}]`;
}

/** An offset, or `-` when the cluster does not know it (-1). */
function offset(value: number): string | number {
  return value < 0 ? '-' : value;
}

/**
 * Sends one request to the admin API and resolves with its JSON body. Rejects with
 * {@link AdminRequestError}: the server's `{error}` for a non-2xx answer, or why it could not be reached.
 */
export function adminRequest(address: AdminAddress, method: 'GET' | 'POST', path: string): Promise<unknown> {
  const where = `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: address.host, port: address.port, method, path, agent: false, timeout: REQUEST_TIMEOUT_MS },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('error', (err) => reject(new AdminRequestError(`admin API at ${where}: ${err.message}`)));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(body) as unknown;
          } catch {
            reject(
              new AdminRequestError(`admin API at ${where} answered ${res.statusCode} with: ${body.slice(0, 200)}`),
            );
            return;
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(parsed);
          else {
            const error = (parsed as { error?: unknown } | null)?.error;
            reject(new AdminRequestError(typeof error === 'string' ? error : `admin API answered ${status}: ${body}`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED')
        reject(
          new AdminRequestError(
            `cannot reach the admin API at ${where} (connection refused): is the broker running? Start it ` +
              `with skiff start (--admin-port sets its admin port), or point --admin at it`,
          ),
        );
      else reject(new AdminRequestError(`admin API at ${where}: ${err.message}`));
    });
    req.end();
  });
}

/** Commander parser for a broker id: a non-negative decimal int32. */
function parseBrokerId(text: string): number {
  const id = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(id <= 0x7fffffff)) throw new InvalidArgumentError('Expected a broker (node) id: a non-negative integer.');
  return id;
}

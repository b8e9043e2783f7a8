/**
 * The admin HTTP API (DESIGN.md "The pieces"; Redpanda's Admin API on its port 9644): cluster and
 * partition state as JSON, Prometheus metrics, and, with `--fault-injection`, crashing, starting and
 * cleanly stopping a broker. It listens on 127.0.0.1 only: it can kill brokers and has no authentication.
 *
 * | route | answer |
 * | --- | --- |
 * | `GET /v1/brokers` | 200, `BrokerInfo[]` (cluster-view.ts) |
 * | `GET /v1/brokers/{id}` | 200, one `BrokerInfo` |
 * | `GET /v1/partitions` | 200, `PartitionInfo[]` |
 * | `POST /v1/brokers/{id}/crash` | 200, the broker's `BrokerInfo` once it is stopped |
 * | `POST /v1/brokers/{id}/start` | 200, the broker's `BrokerInfo` once it listens |
 * | `POST /v1/brokers/{id}/stop` | 200, the broker's `BrokerInfo` once a controlled shutdown stopped it |
 * | `GET /metrics` | 200, Prometheus text format (admin-metrics.ts) |
 *
 * Every error is JSON `{"error": "..."}`: 400 a malformed broker id or URL, 403 crash, start or stop
 * without fault injection, 404 an unknown route or broker, 405 a known route with another method (with
 * `Allow`), 409 a crash or stop of a stopped broker or a start of a running one, 500 anything else the view threw (also
 * logged). Bad input never stops the server. A request body is read and ignored.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import FindMyWay from 'find-my-way';
import type { Logger } from '../io/logger';
import { ADMIN_HOST, DEFAULT_ADMIN_PORT } from './admin-defaults';
import { AdminMetrics } from './admin-metrics';
import {
  BrokerStateError,
  UnknownBrokerError,
  type BrokerAction,
  type BrokerInfo,
  type ClusterView,
} from './cluster-view';

/** Where the admin server listens; port 0 picks a free one (read it back from {@link AdminServer.port}). */
export interface AdminServerOptions {
  /** Default {@link ADMIN_HOST}. */
  host?: string;
  /** Default {@link DEFAULT_ADMIN_PORT}. */
  port?: number;
  /** Where a failed request is logged (default: one line on stderr). */
  logger?: Logger;
}

/** A listening admin server. */
export interface AdminServer {
  host: string;
  /** The port it really listens on (never 0). */
  port: number;
  /** Its metrics; also subscribed to the view through `ClusterView.watch`. */
  metrics: AdminMetrics;
  /** Stops listening, drops open connections and unsubscribes from the view. Idempotent. */
  close(): Promise<void>;
}

/** The admin port could not be bound (in use, or not permitted). `code` is the system error code. */
export class AdminListenError extends Error {
  constructor(
    readonly address: string,
    readonly code: string | undefined,
    cause: Error,
  ) {
    super(`admin API cannot listen on ${address}: ${cause.message}`, { cause });
    this.name = 'AdminListenError';
  }
}

/**
 * Binds and at once closes `host:port`, so a start can refuse an admin port in use before it
 * writes into a log dir (README: "A refused start writes nothing into the data dir"). Rejects with
 * {@link AdminListenError}; port 0 always passes. Another process can still take the port between
 * this check and the real bind, which then fails as before.
 */
export async function checkAdminPortFree(port: number, host: string = ADMIN_HOST): Promise<void> {
  if (port === 0) return;
  const probe = http.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) => reject(new AdminListenError(`${host}:${port}`, err.code, err)));
    probe.listen(port, host, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** An answer to one request: its status, JSON body (or, for /metrics, text), and for a 405 the `Allow` header. */
type Reply = { status: number; allow?: string } & ({ json: unknown } | { text: string; contentType: string });

type RouteHandler = (params: Record<string, string | undefined>) => Promise<Reply>;

/** An error a route answers with a status of its own (the view's typed errors are mapped in {@link errorReply}). */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Methods the routes use; a path that matches one of them under another method gets 405. */
const ROUTE_METHODS = ['GET', 'POST'] as const;

/** Node ids are non-negative int32s. */
const BROKER_ID = /^\d{1,10}$/;

/**
 * Starts the admin server for `view` on `options.host:options.port` and subscribes its metrics to the
 * view. Rejects with {@link AdminListenError} when the port cannot be bound.
 */
export async function startAdminServer(view: ClusterView, options: AdminServerOptions = {}): Promise<AdminServer> {
  const host = options.host ?? ADMIN_HOST;
  const requestedPort = options.port ?? DEFAULT_ADMIN_PORT;
  const logger = options.logger ?? stderrLogger;
  const metrics = new AdminMetrics();
  const router = buildRouter(view, metrics);

  const server = http.createServer((req, res) => {
    req.resume(); // no route reads a body: drain it so keep-alive goes on
    answer(router, req, logger)
      .then((reply) => send(res, reply))
      .catch((err: unknown) => logger.error({ err }, 'admin API could not answer'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new AdminListenError(`${host}:${requestedPort}`, err.code, err)),
    );
    server.listen(requestedPort, host, () => resolve());
  });
  server.on('error', (err) => logger.error({ err }, 'admin API server error'));
  const unwatch = view.watch(metrics);
  let closed: Promise<void> | null = null;
  return {
    host,
    port: (server.address() as AddressInfo).port,
    metrics,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        unwatch();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** A route's match for `method url`, or null; the store tells a real route from find-my-way's bad-URL handler. */
interface Router {
  find(method: string, url: string): { handler: RouteHandler; params: Record<string, string | undefined> } | null;
  /** Whether `url` could not be decoded (bad percent-encoding). */
  badUrl(url: string): boolean;
}

function buildRouter(view: ClusterView, metrics: AdminMetrics): Router {
  const routes = FindMyWay({
    ignoreTrailingSlash: true,
    // Flags a URL that cannot be decoded: find() then returns this handler, with a null store.
    onBadUrl: () => undefined,
  });
  const on = (method: (typeof ROUTE_METHODS)[number], path: string, handler: RouteHandler): void => {
    routes.on(method, path, () => undefined, { handler });
  };
  on('GET', '/v1/brokers', async () => ({ status: 200, json: await view.brokers() }));
  on('GET', '/v1/brokers/:id', async (params) => ({ status: 200, json: await findBroker(view, brokerId(params)) }));
  on('GET', '/v1/partitions', async () => ({ status: 200, json: await view.partitions() }));
  on('POST', '/v1/brokers/:id/crash', async (params) => {
    const id = brokerId(params);
    requireFaultInjection(view, 'crash');
    await view.crashBroker(id);
    return { status: 200, json: await findBroker(view, id) };
  });
  on('POST', '/v1/brokers/:id/start', async (params) => {
    const id = brokerId(params);
    requireFaultInjection(view, 'start');
    await view.startBroker(id);
    return { status: 200, json: await findBroker(view, id) };
  });
  on('POST', '/v1/brokers/:id/stop', async (params) => {
    const id = brokerId(params);
    requireFaultInjection(view, 'stop');
    await view.stopBroker(id);
    return { status: 200, json: await findBroker(view, id) };
  });
  on('GET', '/metrics', async () => {
    const { contentType, text } = await metrics.scrape(view);
    return { status: 200, text, contentType };
  });
  return {
    find: (method, url) => {
      const found = routes.find(method as FindMyWay.HTTPMethod, url);
      const store = found?.store as { handler: RouteHandler } | null | undefined;
      if (found === null || store === null || store === undefined) return null;
      return { handler: store.handler, params: found.params };
    },
    badUrl: (url) => {
      const found = routes.find('GET', url);
      return found !== null && found.store === null;
    },
  };
}

/** Routes one request and runs its handler; never rejects (a throwing handler is a logged 500). */
async function answer(router: Router, req: http.IncomingMessage, logger: Logger): Promise<Reply> {
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  try {
    if (router.badUrl(url)) throw new HttpError(400, `malformed URL ${JSON.stringify(url)}`);
    const route = router.find(method, url);
    if (route === null) {
      const allowed = ROUTE_METHODS.filter((m) => m !== method && router.find(m, url) !== null);
      if (allowed.length === 0) throw new HttpError(404, `no such endpoint: ${method} ${pathOf(url)}`);
      return {
        status: 405,
        allow: allowed.join(', '),
        json: { error: `method ${method} not allowed on ${pathOf(url)} (allowed: ${allowed.join(', ')})` },
      };
    }
    return await route.handler(route.params);
  } catch (err) {
    return errorReply(err, method, url, logger);
  }
}

function errorReply(err: unknown, method: string, url: string, logger: Logger): Reply {
  if (err instanceof HttpError) return { status: err.status, json: { error: err.message } };
  if (err instanceof UnknownBrokerError) return { status: 404, json: { error: err.message } };
  if (err instanceof BrokerStateError) return { status: 409, json: { error: err.message } };
  logger.error({ err, method, url: pathOf(url) }, 'admin API request failed');
  return { status: 500, json: { error: `internal error: ${(err as Error)?.message ?? String(err)}` } };
}

function send(res: http.ServerResponse, reply: Reply): void {
  const body = 'json' in reply ? `${JSON.stringify(reply.json)}\n` : reply.text;
  const headers: http.OutgoingHttpHeaders = {
    'content-type': 'json' in reply ? 'application/json; charset=utf-8' : reply.contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  };
  if (reply.allow !== undefined) headers.allow = reply.allow;
  res.writeHead(reply.status, headers).end(body);
}

/** The `{id}` of a route as a node id; 400 unless it is a non-negative int32 in decimal. */
function brokerId(params: Record<string, string | undefined>): number {
  const text = params.id ?? '';
  const id = BROKER_ID.test(text) ? Number(text) : NaN;
  if (!(id <= 0x7fffffff)) throw new HttpError(400, `malformed broker id ${JSON.stringify(text)}: expected a node id`);
  return id;
}

function requireFaultInjection(view: ClusterView, action: BrokerAction): void {
  if (!view.faultInjection)
    throw new HttpError(
      403,
      `fault injection is disabled: restart skiff with --fault-injection to ${action} brokers through the admin API`,
    );
}

async function findBroker(view: ClusterView, id: number): Promise<BrokerInfo> {
  const broker = (await view.brokers()).find((b) => b.id === id);
  if (broker === undefined) throw new UnknownBrokerError(id);
  return broker;
}

/** The path of a request URL, without its query (for messages). */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The fallback logger: one plain line per event on stderr. */
const stderrLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (fields, msg) => writeLine('warn', fields, msg),
  error: (fields, msg) => writeLine('error', fields, msg),
  child: () => stderrLogger,
};

function writeLine(level: string, fields: object | string, msg: string | undefined): void {
  if (typeof fields === 'string') {
    process.stderr.write(`skiff admin ${level}: ${fields}\n`);
    return;
  }
  const { err, ...rest } = fields as { err?: unknown };
  const detail = err instanceof Error ? (err.stack ?? err.message) : err === undefined ? '' : String(err);
  process.stderr.write(`skiff admin ${level}: ${msg ?? ''} ${JSON.stringify(rest)} ${detail}\n`);
}

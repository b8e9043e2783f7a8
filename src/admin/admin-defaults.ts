/**
 * Where the admin API listens by default, in a module of its own so the CLI's `skiff cluster` client
 * can name the address without loading the server (find-my-way, prom-client).
 */

/** `--admin-port`'s default: Redpanda's admin API port. */
export const DEFAULT_ADMIN_PORT = 9644;

/** The only interface the admin API listens on: it can crash brokers and has no authentication. */
export const ADMIN_HOST = '127.0.0.1';

/**
 * Start-up checks of the log dirs that read and never write, so a refused start leaves a data dir
 * as it found it (Kafka's LogManager checks its dirs the same way before loading any log). Run by
 * the broker before it binds its listener and before {@link createLogDir} and the lock
 * (log-dir-lock.ts) make the first write. Each refusal is a {@link StartupError} with one plain
 * line naming the problem and the fix.
 *
 * Refused:
 * - a path on a pseudo file system (/proc, /sys, cgroup, ...): nothing can be stored there, and
 *   Node's recursive mkdir loops forever on /proc (exit 2, a configuration error);
 * - a path that is, or runs through, a file (exit 2);
 * - a dir (or its nearest existing parent) that this process may not write: read-only mount or
 *   permissions (exit 1);
 * - a dir whose meta.properties names another node, dirs whose meta.properties name different
 *   clusters, or a dir formatted for a cluster (meta.properties with a cluster.id) whose Skiff
 *   metadata log is missing: another cluster's data, e.g. a Kafka log dir (exit 1). A dir whose
 *   metadata log names another cluster is refused later by the log-dir actor, before it writes.
 */
import { constants as fsConstants, promises as fsp } from 'node:fs';
import path from 'node:path';
import { parseProperties } from './config/properties';
import { errnoCode, EXIT_CONFIG, EXIT_FAILURE, StartupError } from './startup-error';

/** Where the controller keeps the metadata log, relative to the first log dir (see broker.ts). */
export const METADATA_DIR = '__skiff_metadata';
const METADATA_LOG_FILE = 'metadata.log';
const META_PROPERTIES_FILE = 'meta.properties';

/** statfs f_type of file systems that hold no files of ours (linux/magic.h). */
const PSEUDO_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x1cd1, 'devpts'],
  [0xcafe4a11, 'bpf'],
  [0x6165676c, 'pstore'],
  [0x62656570, 'configfs'],
  [0xde5e81e4, 'efivarfs'],
]);

const NOT_WRITABLE_CODES: ReadonlySet<string> = new Set(['EROFS', 'EACCES', 'EPERM']);

/** The fix offered whenever a log dir is unusable. */
const CHOOSE_ANOTHER = 'choose another directory with --data-dir (or log.dirs)';

/** The plain line for a log dir this process may not write (EROFS, EACCES, EPERM). */
export function notWritable(logDir: string, code: string): StartupError {
  const why = code === 'EROFS' ? 'is on a read-only file system' : 'is not writable by this user';
  return new StartupError(`log dir ${logDir} ${why} (${code}): ${CHOOSE_ANOTHER}, or make it writable`, EXIT_FAILURE);
}

/** The plain line for a log dir whose path this process may not even look up (a parent without x permission). */
function notAccessible(logDir: string, code: string, at: string): StartupError {
  return new StartupError(
    `log dir ${logDir} is not accessible by this user (${code} at ${at}): ${CHOOSE_ANOTHER}, or fix its permissions`,
    EXIT_FAILURE,
  );
}

/**
 * Checks every dir of `logDirs` (absolute paths) for this node (`nodeId`) without writing; throws
 * {@link StartupError} for the first problem (see the module comment).
 */
export async function validateLogDirs(
  logDirs: readonly string[],
  nodeId: number,
  metadataDir: string = path.join(logDirs[0] ?? '.', METADATA_DIR),
): Promise<void> {
  const clusters = new Map<string, string>(); // cluster.id -> the dir that names it
  for (const logDir of logDirs) {
    const existing = await nearestExisting(logDir);
    const fsType = await fsp.statfs(existing).then(
      (stats) => PSEUDO_FILE_SYSTEMS.get(stats.type),
      () => undefined,
    );
    if (fsType !== undefined) {
      throw new StartupError(
        `log dir ${logDir} is on the ${fsType} pseudo file system, which cannot hold logs: ${CHOOSE_ANOTHER}`,
        EXIT_CONFIG,
      );
    }
    const stats = await fsp.stat(existing).catch((error: unknown) => {
      const code = errnoCode(error);
      throw code === 'EACCES' || code === 'EPERM' ? notAccessible(logDir, code, existing) : error;
    });
    if (!stats.isDirectory()) {
      const what = existing === logDir ? 'is a file' : `runs through the file ${existing}`;
      throw new StartupError(`log dir ${logDir} ${what}, not a directory: ${CHOOSE_ANOTHER}`, EXIT_CONFIG);
    }
    try {
      await fsp.access(existing, fsConstants.W_OK | fsConstants.X_OK);
    } catch (error) {
      const code = errnoCode(error);
      if (code !== undefined && NOT_WRITABLE_CODES.has(code)) throw notWritable(logDir, code);
      throw error;
    }
    if (existing !== logDir) continue; // created later: nothing in it yet
    const meta = await readMeta(path.join(logDir, META_PROPERTIES_FILE));
    if (meta === null) continue;
    if (meta.nodeId !== undefined && meta.nodeId !== String(nodeId)) {
      throw new StartupError(
        `log dir ${logDir} belongs to node ${meta.nodeId}, not ${nodeId} (its meta.properties): ` +
          `start with node.id=${meta.nodeId}, or ${CHOOSE_ANOTHER}`,
        EXIT_FAILURE,
      );
    }
    if (meta.clusterId !== undefined && !clusters.has(meta.clusterId)) clusters.set(meta.clusterId, logDir);
  }
  if (clusters.size > 1) {
    const [[a, dirA], [b, dirB]] = [...clusters.entries()] as [[string, string], [string, string]];
    throw new StartupError(
      `log dirs ${dirA} and ${dirB} belong to different clusters (${a} and ${b}, in their meta.properties): ` +
        `give one cluster's dirs only`,
      EXIT_FAILURE,
    );
  }
  const [cluster] = [...clusters.entries()];
  if (cluster === undefined) return;
  const metadataLog = path.join(metadataDir, METADATA_LOG_FILE);
  const hasMetadataLog = await fsp.stat(metadataLog).then(
    (s) => s.isFile() && s.size > 0,
    () => false,
  );
  if (!hasMetadataLog) {
    throw new StartupError(
      `log dir ${cluster[1]} belongs to cluster ${cluster[0]} (its meta.properties) but ${metadataLog} is missing: ` +
        `it holds another cluster's data (a Kafka log dir?); ${CHOOSE_ANOTHER}`,
      EXIT_FAILURE,
    );
  }
}

/** `dir` itself if it exists, else its nearest existing ancestor (`/` at worst). */
async function nearestExisting(dir: string): Promise<string> {
  let current = dir;
  for (;;) {
    try {
      await fsp.lstat(current);
      return current;
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EACCES' || code === 'EPERM') throw notAccessible(dir, code, current);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const parent = path.dirname(current);
    if (parent === current) return current;
    current = parent;
  }
}

/** node.id and cluster.id of a meta.properties, or null when there is none (or it is unreadable). */
async function readMeta(file: string): Promise<{ nodeId?: string; clusterId?: string } | null> {
  const text = await fsp.readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  let props: Map<string, string>;
  try {
    props = parseProperties(text);
  } catch {
    return null; // corrupt: the log-dir actor warns and rewrites it, as it does today
  }
  const nodeId = props.get('node.id')?.trim();
  const clusterId = props.get('cluster.id')?.trim();
  return {
    ...(nodeId !== undefined && nodeId !== '' ? { nodeId } : {}),
    ...(clusterId !== undefined && clusterId !== '' ? { clusterId } : {}),
  };
}

/**
 * Creates `dir` and its missing parents one level at a time (Node's recursive mkdir never returns
 * on some pseudo file systems); an unwritable parent is a {@link StartupError}.
 */
export async function createLogDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let current = dir; ; current = path.dirname(current)) {
    const exists = await fsp.stat(current).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (exists || path.dirname(current) === current) break;
    missing.unshift(current);
  }
  for (const level of missing) {
    try {
      await fsp.mkdir(level);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EEXIST') continue;
      if (code !== undefined && NOT_WRITABLE_CODES.has(code)) throw notWritable(dir, code);
      throw new StartupError(
        `cannot create log dir ${dir} (${code ?? String(error)} at ${level}): ${CHOOSE_ANOTHER}`,
        EXIT_CONFIG,
      );
    }
  }
}

/**
 * The layer check (STYLE.md habits 1 and 6; code review D3-D6, §6.8 after TigerBeetle's `tidy.zig`).
 * Compiled by the normal build to dist/scripts/check-layers.js; `npm run lint:layers` runs it.
 *
 * It reads every `src/**\/*.ts` file's imports (`import`, `import type`, `export ... from`, `import x =
 * require()`, `require()` and `import()`; type-only imports count: a type still couples two folders) and
 * fails, one line per violation (`file:line: what — rule`), on:
 *   (a) an import from a folder that the importing folder's row of the layer table does not list;
 *   (b) a folder cycle in the import graph, a cycle between files (D4), or a table whose lists are not
 *       strictly downward;
 *   (c) a non-deterministic API (`Date.now`, `setTimeout`, `setInterval`, `Math.random`, `process.pid`,
 *       `node:fs`, `worker_threads`) in actor code (controller/, replica/, group/, storage/, io/ and the
 *       modules runtime registers as actor kinds and CPU jobs) or in anything it imports, transitively,
 *       except the commented {@link BANNED_API_ALLOWLIST} entries. {@link BANNED_API_SCOPES} also bans them in
 *       network handlers, which keep time with BrokerContext's injected clock and timers.
 *
 * The layer table is the one src/README.md shows, between `<!-- layers:begin -->` and
 * `<!-- layers:end -->`: the README is the table's one copy, so the rule and its documentation cannot
 * drift. Each row is `| layer | \`folder\` | owns | \`a\`, \`b\` |` (a `—` for no imports). Files directly
 * in src/ (broker.ts and the process-level files beside it) form the `broker` layer.
 *
 *   node dist/scripts/check-layers.js [repoRoot]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** One row of the layer table: a folder, its layer (lower imports nothing higher) and what it may import. */
export interface LayerRow {
  folder: string;
  layer: number;
  mayImport: string[];
  /** 1-based line of the row in the README (for messages about the table itself). */
  line: number;
}

/** One failed rule, printed as `file:line: subject — rule`. */
export interface Violation {
  file: string;
  line: number;
  subject: string;
  rule: string;
}

/** An import as written: the module specifier and where it is. */
interface ImportRef {
  specifier: string;
  line: number;
}

/** A non-deterministic API use found in a file. */
interface ApiUse {
  api: BannedApi;
  line: number;
  /** How the report names it, when not the API itself (a module import). */
  subject?: string;
}

/** The README the layer table lives in, and the path prefix of the sources. */
export const README_PATH = 'src/README.md';
const SRC_PREFIX = 'src/';
const TABLE_BEGIN = '<!-- layers:begin -->';
const TABLE_END = '<!-- layers:end -->';
/** The layer of the files directly in src/ (the broker process: wiring, ordered shutdown, log-dir lock). */
export const ROOT_LAYER = 'broker';

/** The banned APIs: a global member or call, or a module. */
export const BANNED_APIS = [
  'Date.now',
  'setTimeout',
  'setInterval',
  'Math.random',
  'process.pid',
  'node:fs',
  'worker_threads',
] as const;
type BannedApi = (typeof BANNED_APIS)[number];

/** Module specifiers that count as `node:fs` or `worker_threads`. */
const BANNED_MODULES: Record<string, BannedApi> = {
  'node:fs': 'node:fs',
  fs: 'node:fs',
  'node:fs/promises': 'node:fs',
  'fs/promises': 'node:fs',
  'node:worker_threads': 'worker_threads',
  worker_threads: 'worker_threads',
};

/**
 * Where the banned APIs are banned. `roots` are path prefixes under src/ whose files are checked, and with
 * `transitive` every src file they import, directly or not (type-only imports too).
 */
export interface BannedApiScope {
  name: string;
  roots: string[];
  transitive: boolean;
  enabled: boolean;
  /** Also root the modules runtime/registry.ts and cpu-jobs.ts name (actor kinds, CPU jobs). */
  includeRegisteredActors: boolean;
  /** Where the code should get the API from instead (ends the violation line). */
  instead: string;
}

export const BANNED_API_SCOPES: BannedApiScope[] = [
  {
    name: 'actor code',
    // io/ is a root too: the simulation's twins (MemoryFileSystem, the seeded Random) must be as
    // deterministic as the actors they serve; its one OS edge is allowlisted below.
    roots: ['src/controller/', 'src/replica/', 'src/group/', 'src/replica-manager/', 'src/storage/', 'src/io/'],
    transitive: true,
    enabled: true,
    includeRegisteredActors: true,
    instead: 'take it from the ActorContext (clock, timers, random, fs)',
  },
  {
    // Network handlers keep time with BrokerContext's injected clock and timers (code review D6), so a
    // Fetch long poll runs unchanged in the simulation.
    name: 'network handlers',
    roots: ['src/network/handlers/'],
    transitive: true,
    enabled: true,
    includeRegisteredActors: false,
    instead: "take it from BrokerContext (the broker's clock and timers)",
  },
];

/** Files whose module strings name actor kinds and CPU jobs (`module: '...'`, relative to src/). */
const ACTOR_MODULE_REGISTRIES = ['src/runtime/registry.ts', 'src/runtime/cpu-jobs.ts'];

/**
 * The real OS edge: a file here may use the listed banned APIs although it is in a scope's closure. Keep
 * each entry to the APIs the file exists to wrap. runtime's thread and worker code (worker-host.ts,
 * thread-runtime.ts, worker-slot.ts, cpu-pool.ts, cpu-job-worker.ts) and the real clock (system-time.ts)
 * need no entry: no actor imports them (the runtime hands their services in through the context). If one
 * ever shows up here, an actor has imported the runtime's machinery: fix that import, do not list the file.
 */
export const BANNED_API_ALLOWLIST: Record<string, { apis: BannedApi[]; why: string }> = {
  'src/io/node-file-system.ts': {
    apis: ['node:fs'],
    why: 'the production FileSystem: actors reach node:fs only through it, as ctx.fs',
  },
};

/** Parses the layer table from the README text; throws if the markers or rows are malformed. */
export function parseLayerTable(readme: string): LayerRow[] {
  const lines = readme.split('\n');
  const begin = lines.findIndex((l) => l.trim() === TABLE_BEGIN);
  const end = lines.findIndex((l) => l.trim() === TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`${README_PATH}: no ${TABLE_BEGIN} ... ${TABLE_END} block`);
  const rows: LayerRow[] = [];
  for (let i = begin + 1; i < end; i++) {
    const text = (lines[i] ?? '').trim();
    if (!text.startsWith('|')) continue;
    const cells = text
      .slice(1, text.endsWith('|') ? -1 : undefined)
      .split('|')
      .map((c) => c.trim());
    const [layerCell, folderCell, , importsCell] = cells;
    if (layerCell === undefined || !/^\d+$/.test(layerCell)) continue; // the header and its --- row
    const folder = /^`([^`]+)`/.exec(folderCell ?? '')?.[1];
    if (folder === undefined || importsCell === undefined) {
      throw new Error(`${README_PATH}:${i + 1}: a layer row needs | layer | \`folder\` | owns | imports |`);
    }
    const mayImport = [...importsCell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
    rows.push({ folder, layer: Number(layerCell), mayImport, line: i + 1 });
  }
  if (rows.length === 0) throw new Error(`${README_PATH}: the layer table has no rows`);
  return rows;
}

/** The layer name of a source path (`src/storage/log.ts` -> `storage`, `src/broker.ts` -> `broker`). */
export function folderOf(file: string): string {
  const rest = file.slice(SRC_PREFIX.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? ROOT_LAYER : rest.slice(0, slash);
}

function lineOf(sf: ts.SourceFile, node: ts.Node): number {
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

/** Every module specifier a file names, static or dynamic, type-only or not. */
function importsOf(sf: ts.SourceFile): ImportRef[] {
  const found: ImportRef[] = [];
  const add = (spec: ts.Expression | undefined, at: ts.Node): void => {
    if (spec !== undefined && ts.isStringLiteralLike(spec)) found.push({ specifier: spec.text, line: lineOf(sf, at) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier, node);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node.moduleReference.expression, node);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      if (isRequire || callee.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], node);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, node);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const GLOBAL_OBJECTS = new Set(['globalThis', 'global', 'window']);
const BANNED_MEMBERS: Record<string, BannedApi> = {
  'Date.now': 'Date.now',
  'Math.random': 'Math.random',
  'process.pid': 'process.pid',
};
const BANNED_GLOBALS = new Set<string>(['setTimeout', 'setInterval']);

/**
 * Whether identifier `node` reads the global of its name: not a member name (`timers.setTimeout`), a
 * declared name (`setTimeout(fn, ms): TimerHandle` in an interface), an import/export alias or a type query.
 */
function readsGlobal(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isShorthandPropertyAssignment(parent)) return true;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) {
    return ts.isIdentifier(parent.expression) && GLOBAL_OBJECTS.has(parent.expression.text);
  }
  const named = parent as ts.Node & { name?: ts.Node; propertyName?: ts.Node };
  if (named.name === node || named.propertyName === node) return false;
  if (ts.isQualifiedName(parent) || ts.isTypeQueryNode(parent) || ts.isTypeReferenceNode(parent)) return false;
  return true;
}

/** The banned member reads and global calls in a file (the module imports are found with the imports). */
function bannedApiUses(sf: ts.SourceFile): ApiUse[] {
  const found: ApiUse[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const api = BANNED_MEMBERS[`${node.expression.text}.${node.name.text}`];
      if (api !== undefined) found.push({ api, line: lineOf(sf, node) });
    } else if (ts.isIdentifier(node) && BANNED_GLOBALS.has(node.text) && readsGlobal(node)) {
      found.push({ api: node.text as BannedApi, line: lineOf(sf, node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The src file a relative specifier names (`x.ts` or `x/index.ts`), or undefined (outside src, missing). */
function resolveImport(from: string, specifier: string, files: ReadonlyMap<string, string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) if (files.has(candidate)) return candidate;
  return undefined;
}

/** Strongly connected components of a graph with more than one node (each a cycle), by Tarjan. */
function cyclicComponents(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  const strongConnect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (;;) {
        const w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
        if (w === v) break;
      }
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) strongConnect(v);
  return components;
}

/** The shortest folder path `from` -> ... -> `to` inside `within` (both ends included). */
function shortestPath(
  from: string,
  to: string,
  graph: ReadonlyMap<string, ReadonlySet<string>>,
  within: ReadonlySet<string>,
): string[] {
  const previous = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let head = queue.shift(); head !== undefined && !previous.has(to); head = queue.shift()) {
    for (const next of graph.get(head) ?? []) {
      if (!within.has(next) || previous.has(next)) continue;
      previous.set(next, head);
      queue.push(next);
    }
  }
  const path: string[] = [];
  for (let at: string | null | undefined = to; at !== null && at !== undefined; at = previous.get(at)) path.unshift(at);
  return path;
}

/** Every file reachable from `roots` through `edges` (the roots included). */
function closureOf(roots: Iterable<string>, edges: ReadonlyMap<string, ReadonlySet<string>>): Set<string> {
  const seen = new Set<string>();
  const todo = [...roots];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const next of edges.get(file) ?? []) if (!seen.has(next)) todo.push(next);
  }
  return seen;
}

/** The import graph of a tree: file and folder edges, and what each file imports and calls. */
interface ImportGraph {
  /** src files, sorted. */
  sources: string[];
  fileEdges: Map<string, Set<string>>;
  folderEdges: Map<string, Set<string>>;
  /** Every import between two folders. */
  crossImports: Array<{ file: string; ref: ImportRef; from: string; to: string }>;
  /** Per file: its imports as written, and those that name no src file (packages, node: modules). */
  imports: Map<string, ImportRef[]>;
  externalImports: Map<string, ImportRef[]>;
  apiUses: Map<string, ApiUse[]>;
}

function buildGraph(files: ReadonlyMap<string, string>): ImportGraph {
  const sources = [...files.keys()].filter((f) => f.startsWith(SRC_PREFIX) && f.endsWith('.ts')).sort();
  const graph: ImportGraph = {
    sources,
    fileEdges: new Map(),
    folderEdges: new Map(),
    crossImports: [],
    imports: new Map(),
    externalImports: new Map(),
    apiUses: new Map(),
  };
  for (const file of sources) {
    const sf = ts.createSourceFile(file, files.get(file) as string, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    const targets = new Set<string>();
    const external: ImportRef[] = [];
    const refs = importsOf(sf);
    for (const ref of refs) {
      const target = resolveImport(file, ref.specifier, files);
      if (target === undefined) {
        external.push(ref);
        continue;
      }
      targets.add(target);
      const from = folderOf(file);
      const to = folderOf(target);
      if (from === to) continue;
      graph.crossImports.push({ file, ref, from, to });
      let tos = graph.folderEdges.get(from);
      if (tos === undefined) graph.folderEdges.set(from, (tos = new Set()));
      tos.add(to);
    }
    graph.fileEdges.set(file, targets);
    graph.imports.set(file, refs);
    graph.externalImports.set(file, external);
    graph.apiUses.set(file, bannedApiUses(sf));
  }
  return graph;
}

/** The table itself: strictly downward lists (so it has no cycle), and a row for every folder there is. */
function checkTable(rows: LayerRow[], sources: string[]): Violation[] {
  const violations: Violation[] = [];
  const byFolder = new Map(rows.map((r) => [r.folder, r]));
  for (const row of rows) {
    for (const dep of row.mayImport) {
      const target = byFolder.get(dep);
      if (target !== undefined && target.layer < row.layer) continue;
      const why = target === undefined ? 'which has no row' : `which is not in a lower layer (${target.layer})`;
      violations.push({
        file: README_PATH,
        line: row.line,
        subject: `${row.folder} (layer ${row.layer}) may import ${dep}`,
        rule: `the layer table lists ${dep}, ${why}`,
      });
    }
  }
  for (const folder of [...new Set(sources.map(folderOf))].sort()) {
    if (byFolder.has(folder)) continue;
    violations.push({
      file: README_PATH,
      line: 1,
      subject: folder,
      rule: 'a src folder with no row in the layer table',
    });
  }
  return violations;
}

/** (a) Imports of a folder the importing folder's row does not list. */
function checkImports(rows: LayerRow[], graph: ImportGraph): Violation[] {
  const byFolder = new Map(rows.map((r) => [r.folder, r]));
  const violations: Violation[] = [];
  for (const { file, ref, from, to } of graph.crossImports) {
    const row = byFolder.get(from);
    if (row === undefined || row.mayImport.includes(to)) continue;
    const allowed = row.mayImport.length === 0 ? 'nothing' : row.mayImport.join(', ');
    violations.push({
      file,
      line: ref.line,
      subject: `import '${ref.specifier}'`,
      rule: `${from} may not import ${to} (${from} may import: ${allowed}; ${README_PATH})`,
    });
  }
  return violations;
}

/**
 * (b) Cycles. Between folders: each import of a cycle that goes up (or sideways) the layer order, since
 * that is the one that closes it. Between files (type-only imports too, D4): one line per cycle.
 */
function checkCycles(rows: LayerRow[], graph: ImportGraph, files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  const layers = new Map(rows.map((r) => [r.folder, r.layer]));
  const layerOf = (folder: string): number => layers.get(folder) ?? Number.POSITIVE_INFINITY;
  for (const component of cyclicComponents(graph.folderEdges)) {
    const members = new Set(component);
    for (const { file, ref, from, to } of graph.crossImports) {
      if (!members.has(from) || !members.has(to) || layerOf(to) < layerOf(from)) continue;
      const back = shortestPath(to, from, graph.folderEdges, members);
      violations.push({
        file,
        line: ref.line,
        subject: `import '${ref.specifier}'`,
        rule: `folder cycle ${[from, ...back].join(' -> ')}`,
      });
    }
  }
  for (const component of cyclicComponents(graph.fileEdges)) {
    const members = new Set(component);
    const first = component[0] as string;
    const next = [...(graph.fileEdges.get(first) ?? [])].find((f) => members.has(f)) as string;
    const back = shortestPath(next, first, graph.fileEdges, members);
    const ref = graph.imports.get(first)?.find((r) => resolveImport(first, r.specifier, files) === next);
    violations.push({
      file: first,
      line: ref?.line ?? 1,
      subject: `import '${ref?.specifier ?? next}'`,
      rule: `file cycle ${[first, ...back].join(' -> ')}`,
    });
  }
  return violations;
}

/** The src modules that runtime's registries name as actor kinds or CPU jobs (`module: 'replica/...'`). */
function registeredActorModules(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const registry of ACTOR_MODULE_REGISTRIES) {
    for (const m of (files.get(registry) ?? '').matchAll(/module:\s*'([^'/][^']*)'/g)) {
      const candidate = `${SRC_PREFIX}${m[1] ?? ''}.ts`;
      if (files.has(candidate)) found.push(candidate);
    }
  }
  return found;
}

/** (c) Banned APIs in each enabled scope's closure, then allowlist entries that nothing needed. */
function checkBannedApis(
  graph: ImportGraph,
  files: ReadonlyMap<string, string>,
  scopes: readonly BannedApiScope[],
): Violation[] {
  const violations: Violation[] = [];
  const reported = new Set<string>();
  const allowlistUsed = new Set<string>();
  for (const scope of scopes) {
    if (!scope.enabled) continue;
    const roots = graph.sources.filter((f) => scope.roots.some((r) => f.startsWith(r)));
    if (scope.includeRegisteredActors) roots.push(...registeredActorModules(files));
    const checked = scope.transitive ? closureOf(roots, graph.fileEdges) : new Set(roots);
    for (const file of [...checked].sort()) {
      const allowed = new Set<string>(BANNED_API_ALLOWLIST[file]?.apis ?? []);
      const uses: ApiUse[] = [...(graph.apiUses.get(file) ?? [])];
      for (const ref of graph.externalImports.get(file) ?? []) {
        const api = BANNED_MODULES[ref.specifier];
        if (api !== undefined) uses.push({ api, line: ref.line, subject: `import '${ref.specifier}'` });
      }
      for (const use of uses) {
        if (allowed.has(use.api)) {
          allowlistUsed.add(`${file}:${use.api}`);
          continue;
        }
        const subject = use.subject ?? use.api;
        const key = `${file}:${use.line}:${subject}`;
        if (reported.has(key)) continue;
        reported.add(key);
        const where = roots.includes(file) ? scope.name : `a file ${scope.name} imports`;
        violations.push({ file, line: use.line, subject, rule: `banned in ${where}: ${scope.instead}` });
      }
    }
  }
  // An allowlist entry nothing needs is a hole waiting for a use: it must go.
  for (const [file, entry] of Object.entries(BANNED_API_ALLOWLIST)) {
    for (const api of entry.apis) {
      if (allowlistUsed.has(`${file}:${api}`) || !files.has(file)) continue;
      violations.push({
        file,
        line: 1,
        subject: api,
        rule: 'allowlisted in check-layers.ts but not used here: drop it',
      });
    }
  }
  return violations;
}

/**
 * Checks a source tree. `files` maps repo-relative paths (`src/...`) to their text and must hold
 * src/README.md. Pure: the same input gives the same violations, sorted by file and line.
 */
export function checkLayers(
  files: ReadonlyMap<string, string>,
  scopes: readonly BannedApiScope[] = BANNED_API_SCOPES,
): Violation[] {
  const readme = files.get(README_PATH);
  if (readme === undefined) throw new Error(`${README_PATH} is missing`);
  const rows = parseLayerTable(readme);
  const graph = buildGraph(files);
  const violations = [
    ...checkTable(rows, graph.sources),
    ...checkImports(rows, graph),
    ...checkCycles(rows, graph, files),
    ...checkBannedApis(graph, files, scopes),
  ];
  return violations.sort((x, y) => (x.file === y.file ? x.line - y.line : x.file < y.file ? -1 : 1));
}

/** Formats a violation as one line: `file:line: subject — rule`. */
export function formatViolation(v: Violation): string {
  return `${v.file}:${v.line}: ${v.subject} — ${v.rule}`;
}

/** Reads src/**\/*.ts and src/README.md under `root` into the map {@link checkLayers} takes. */
export function readTree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') || rel === README_PATH)
        files.set(rel, fs.readFileSync(path.join(root, rel), 'utf8'));
    }
  };
  walk('src');
  return files;
}

function main(): void {
  const root = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '..'));
  const violations = checkLayers(readTree(root));
  for (const v of violations) console.log(formatViolation(v));
  if (violations.length > 0) {
    console.log(`check-layers: ${violations.length} violation(s)`);
    process.exitCode = 1;
  }
}

if (require.main === module) main();

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { EXIT_USAGE, parseCliArgs, resolveStartConfig, type CliOutput, type StartArgs } from '../../../src/cli/args';
import { ConfigError } from '../../../src/config/broker-config';

/** Parses argv, capturing commander's output. */
function parse(argv: string[]): { command: ReturnType<typeof parseCliArgs>; out: string; err: string } {
  let out = '';
  let err = '';
  const output: CliOutput = { writeOut: (text) => (out += text), writeErr: (text) => (err += text) };
  return { command: parseCliArgs(argv, output), out, err };
}

function startArgs(argv: string[]): StartArgs {
  const { command, err } = parse(argv);
  assert.equal(command.kind, 'start', err);
  return (command as { kind: 'start'; args: StartArgs }).args;
}

const NO_ARGS: StartArgs = {
  propertiesFile: null,
  overrides: [],
  port: null,
  dataDir: null,
  nodes: 1,
  adminPort: null,
  faultInjection: false,
};

describe('parseCliArgs', () => {
  it('parses a bare start', () => {
    assert.deepEqual(startArgs(['start']), NO_ARGS);
  });

  it('refuses --port with --nodes when the last broker would need a port past 65535', () => {
    const { command, err } = parse(['start', '--port', '65535', '--nodes', '3']);
    assert.deepEqual(command, { kind: 'exit', exitCode: 2 });
    assert.match(err, /--port 65535 with --nodes 3 needs ports up to 65537/);
    assert.equal(startArgs(['start', '--port', '65533', '--nodes', '3']).port, 65533);
  });

  it('parses --nodes and refuses a count outside 1..16', () => {
    assert.equal(startArgs(['start', '--nodes', '3']).nodes, 3);
    for (const bad of ['0', '17', 'x', '-1']) {
      const { command, err } = parse(['start', '--nodes', bad]);
      assert.deepEqual(command, { kind: 'exit', exitCode: 2 }, bad);
      assert.match(err, /number of brokers in 1\.\.16/);
    }
  });

  it('parses a file, repeated overrides in order, --port and --data-dir', () => {
    assert.deepEqual(
      startArgs([
        'start',
        'server.properties',
        '--override',
        'num.partitions=3',
        '--port',
        '0',
        '--override',
        'a.b= x=y ',
        '--data-dir',
        '/tmp/d',
      ]),
      {
        propertiesFile: 'server.properties',
        overrides: [
          ['num.partitions', '3'],
          ['a.b', ' x=y '],
        ],
        port: 0,
        dataDir: '/tmp/d',
        nodes: 1,
        adminPort: null,
        faultInjection: false,
      },
    );
  });

  it('accepts --opt=value spelling', () => {
    assert.deepEqual(startArgs(['start', '--port=9093', '--override=node.id=2']), {
      ...NO_ARGS,
      port: 9093,
      overrides: [['node.id', '2']],
    });
  });

  for (const [argv, pattern] of [
    [['start', '--override', 'novalue'], /--override <key=value>.*Expected key=value/],
    [['start', '--override', '=1'], /Expected key=value/],
    [['start', '--port', 'abc'], /Expected a port number/],
    [['start', '--port', '65536'], /Expected a port number/],
    [['start', '--port', '-1'], /./],
    [['start', '--bogus'], /unknown option '--bogus'/],
    [['start', 'a.properties', 'b.properties'], /too many arguments/],
    [['stop'], /unknown command 'stop'/],
    [[], /Usage: skiff/],
  ] as Array<[string[], RegExp]>) {
    it(`exits ${EXIT_USAGE} on usage error: skiff ${argv.join(' ')}`, () => {
      const { command, err } = parse(argv);
      assert.deepEqual(command, { kind: 'exit', exitCode: EXIT_USAGE });
      assert.match(err, pattern);
    });
  }

  it('prints help and the version with exit code 0', () => {
    const help = parse(['start', '--help']);
    assert.deepEqual(help.command, { kind: 'exit', exitCode: 0 });
    assert.match(help.out, /--override <key=value>/);
    assert.match(help.out, /--port <n>/);
    assert.match(help.out, /--data-dir <dir>/);
    const version = parse(['--version']);
    assert.deepEqual(version.command, { kind: 'exit', exitCode: 0 });
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(version.out.trim(), pkg.version);
  });
});

describe('resolveStartConfig', () => {
  const files: Record<string, string> = {
    'server.properties': 'num.partitions=2\nlisteners=PLAINTEXT://0.0.0.0:9092\nlog.dirs=/from/file\nnode.id=5\n',
  };
  const readFile = (file: string): string => {
    const text = files[file];
    if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${file}'`);
    return text;
  };

  it('uses defaults without a file or flags', () => {
    const config = resolveStartConfig(NO_ARGS, readFile);
    assert.deepEqual(config.listeners, [{ host: '127.0.0.1', port: 9092 }]);
    assert.deepEqual(config.logDirs, ['./data']);
  });

  it('applies file, then overrides in order, then --port and --data-dir', () => {
    const config = resolveStartConfig(
      {
        propertiesFile: 'server.properties',
        overrides: [
          ['num.partitions', '3'],
          ['num.partitions', '4'],
          ['log.dirs', '/from/override'],
          ['listeners', 'PLAINTEXT://10.0.0.1:1234'],
        ],
        port: 0,
        dataDir: '/from/flag',
        nodes: 1,
        adminPort: null,
        faultInjection: false,
      },
      readFile,
    );
    assert.equal(config.nodeId, 5, 'file value kept');
    assert.equal(config.numPartitions, 4, 'last override wins');
    assert.deepEqual(config.logDirs, ['/from/flag'], '--data-dir beats overrides and file');
    assert.deepEqual(config.listeners, [{ host: '127.0.0.1', port: 0 }], '--port rewrites listeners on 127.0.0.1');
    assert.deepEqual(
      config.advertisedListeners,
      [{ host: '127.0.0.1', port: 0 }],
      '--port rewrites advertised listeners',
    );
  });

  it('still rejects a malformed listeners that --port replaces', () => {
    assert.throws(
      () =>
        resolveStartConfig(
          { ...NO_ARGS, overrides: [['listeners', 'PLAINTEXT://127.0.0.1:notaport']], port: 0 },
          readFile,
        ),
      (err: unknown) => err instanceof ConfigError && /listeners/.test(err.message),
    );
  });

  it('checks that listeners with --data-dir already applied', () => {
    const config = resolveStartConfig(
      {
        ...NO_ARGS,
        overrides: [
          ['log.dirs', '/a,/a'],
          ['listeners', 'PLAINTEXT://127.0.0.1:9092'],
        ],
        port: 0,
        dataDir: '/x',
      },
      readFile,
    );
    assert.deepEqual(config.logDirs, ['/x'], 'the duplicate log.dirs that --data-dir replaces is not an error');
  });

  it('lets overrides beat the file', () => {
    const config = resolveStartConfig(
      { ...NO_ARGS, propertiesFile: 'server.properties', overrides: [['log.dirs', '/o']] },
      readFile,
    );
    assert.deepEqual(config.logDirs, ['/o']);
    assert.equal(config.numPartitions, 2);
  });

  it('rejects an unknown override key, naming the nearest key', () => {
    assert.throws(
      () => resolveStartConfig({ ...NO_ARGS, overrides: [['num.partiton', '3']] }, readFile),
      (err: unknown) => err instanceof ConfigError && /nearest known key: num\.partitions/.test(err.message),
    );
  });

  it('turns an unreadable or malformed file into a ConfigError naming it', () => {
    assert.throws(
      () => resolveStartConfig({ ...NO_ARGS, propertiesFile: 'missing.properties' }, readFile),
      (err: unknown) =>
        err instanceof ConfigError && /Cannot read config file missing\.properties: ENOENT/.test(err.message),
    );
    files['bad.properties'] = 'a.b=1\nc=\\uXYZW\n';
    assert.throws(
      () => resolveStartConfig({ ...NO_ARGS, propertiesFile: 'bad.properties' }, readFile),
      (err: unknown) => err instanceof ConfigError && /^bad\.properties: line 2: malformed/.test(err.message),
    );
  });

  it('reads a real file from disk by default', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-cli-test-'));
    try {
      const file = path.join(dir, 'server.properties');
      fs.writeFileSync(file, '# test\nnum.io.threads = 3\n');
      assert.equal(resolveStartConfig({ ...NO_ARGS, propertiesFile: file }).numIoThreads, 3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bin/skiff.js', () => {
  const repoRoot = path.join(__dirname, '..', '..', '..', '..');
  const bin = path.join(repoRoot, 'bin', 'skiff.js');

  it('exits 2 with the message on stderr for a config error, before starting anything', () => {
    const result = spawnSync(process.execPath, [bin, 'start', '--override', 'log.segment.byte=1'], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /Unknown configuration "log\.segment\.byte" \(nearest known key: log\.segment\.bytes\)/,
    );
  });

  it('exits 2 on a usage error and 0 on --help', () => {
    assert.equal(spawnSync(process.execPath, [bin, 'start', '--port', 'x'], { encoding: 'utf8' }).status, 2);
    const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /start \[options\] \[server\.properties\]/);
  });

  it('asks for a build when dist/ is missing', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-bin-test-'));
    try {
      fs.mkdirSync(path.join(dir, 'bin'));
      fs.copyFileSync(bin, path.join(dir, 'bin', 'skiff.js'));
      const result = spawnSync(process.execPath, [path.join(dir, 'bin', 'skiff.js'), 'start'], { encoding: 'utf8' });
      assert.equal(result.status, 1);
      assert.match(result.stderr, /run npm run build first/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

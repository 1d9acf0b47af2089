#!/usr/bin/env node
// `npm run bench`: runs bench/src/main.ts straight from TypeScript, resolved the way jest resolves
// it (jest.config.js): each @ferry/* workspace maps to its src/, and the generated Prisma client's
// `./x.js` imports map to the .ts files. Sources are transpiled with the root's TypeScript, without
// type checking (that is `tsc -p tsconfig.tests.json`), so the benchmarks need no build step.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');

const root = path.resolve(__dirname, '..');
const workspaces = {
  '@ferry/core': 'packages/core',
  '@ferry/testing': 'packages/testing',
  '@ferry/rabbitmq': 'transports/rabbitmq',
  '@ferry/kafka': 'transports/kafka',
  '@ferry/sqs': 'transports/sqs',
};

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  for (const [name, dir] of Object.entries(workspaces)) {
    if (request === name) return path.join(root, dir, 'src/index.ts');
    if (request.startsWith(`${name}/`)) {
      return resolveFilename.call(
        this,
        path.join(root, dir, 'src', request.slice(name.length + 1)),
        parent,
        ...rest,
      );
    }
  }
  if (/^\.{1,2}\/.*\.js$/.test(request) && parent && parent.filename && parent.filename.endsWith('.ts')) {
    const candidate = path.resolve(path.dirname(parent.filename), request.replace(/\.js$/, '.ts'));
    if (fs.existsSync(candidate)) return candidate;
  }
  return resolveFilename.call(this, request, parent, ...rest);
};

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  experimentalDecorators: true,
  sourceMap: false,
  inlineSourceMap: true,
};
require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};

process.env.FERRY_LOG_LEVEL ??= 'error';
if (process.env.BENCH_CHILD === 'relay') {
  // One relay process of the relay-processes-xN scenarios (bench/src/relayChild.ts).
  require('./src/relayChild.ts')
    .runRelayChild()
    .then(() => process.exit(0));
  return;
}
// `node run.js chart [report.json] [out.svg]` (npm run bench:chart) renders a report; otherwise run the bench.
const run =
  process.argv[2] === 'chart'
    ? Promise.resolve().then(() => require('./src/chartMain.ts').chartMain(process.argv.slice(3)))
    : require('./src/main.ts').main();
run
  .then(
    (code) => code,
    (error) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      return 1;
    },
  )
  // A client library may keep a timer or socket alive after close; the report is already written.
  .then((code) => process.exit(code));

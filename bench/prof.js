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
if (false && process.env.BENCH_CHILD === 'relay') {
  // One relay process of the relay-processes-xN scenarios (bench/src/relayChild.ts).
  require('./src/relayChild.ts')
}
const counts = new Map(); let counting = false;
const pgc = require('pg').Client.prototype; const oq = pgc.query;
pgc.query = function (q, ...r) { if (counting) { const t = (typeof q === 'string' ? q : q.text).replace(/\s+/g, ' ').trim().slice(0, 70); counts.set(t, (counts.get(t) || 0) + 1); } return oq.call(this, q, ...r); };
const { workerCompletions } = require('./src/scenarios/workerCompletions.ts');
(async () => {
  const inst = await workerCompletions.open();
  const which = process.env.PROF_WHICH ?? 'subject';
  await inst[which](1000);
  const { Session } = require('node:inspector');
  const s = new Session(); s.connect();
  const post = (m, p) => new Promise((res, rej) => s.post(m, p, (e, r) => (e ? rej(e) : res(r))));
  await post('Profiler.enable'); await post('Profiler.start');
  const t = Date.now(); counting = true;
  const r = await inst[which](Number(process.env.PROF_N ?? 4000));
  const { profile } = await post('Profiler.stop');
  require('fs').writeFileSync('/tmp/prof/' + which + '.cpuprofile', JSON.stringify(profile));
  console.log(which, r.ops / ((Date.now() - t) / 1000));
  counting = false; for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1])) console.log(v, k);
  await inst.close();
  process.exit(0);
})();

// Lets a child `node` process (`node -r test-support/register-ts.js some.ts`) run ferry's
// TypeScript the way jest runs the tests: transpile-only (with the decorator metadata Nest needs),
// `@ferry/<package>[/<path>]` → its sources, and `./x.js` → `./x.ts` (the generated Prisma clients
// import their siblings so). The one home of this hook (tests take its path from
// test-support/registerTs.ts).
//
// Transpiling is most of what such a child costs (starting the rabbitmq-consumer example: ~6 s of
// CPU, typescript itself ~0.6 s of it), and the suite starts many. So each output is kept on disk,
// under the git-ignored node_modules/.cache/ferry-register-ts/ (FERRY_REGISTER_TS_CACHE: another
// folder), keyed by a hash of everything it depends on: the file's path and text, the compiler
// options, typescript's version and this hook's own version (CACHE_VERSION: raise it when the way
// output is made changes). typescript is loaded only when an output is missing. An entry is
// written to a temporary file and renamed into place (several jest workers start children at
// once), and carries the hash of its body: an entry that does not match is transpiled afresh.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const CACHE_VERSION = 1;
const root = path.resolve(__dirname, '..');
const packages = {
  core: 'packages/core',
  testing: 'packages/testing',
  nestjs: 'packages/nestjs',
  rabbitmq: 'transports/rabbitmq',
  kafka: 'transports/kafka',
  sqs: 'transports/sqs',
};
// As tsconfig.json spells them (converted with typescript's own parser on a miss).
const compilerOptions = {
  module: 'commonjs',
  target: 'es2022',
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
};
const cacheFolder =
  process.env.FERRY_REGISTER_TS_CACHE || path.join(root, 'node_modules/.cache/ferry-register-ts');

let typescript;
let typescriptVersion;

function sha256(text) {
  return crypto.createHash('sha256').update(text).digest('hex');
}

/** typescript's version, read from its package.json (loading typescript costs ~0.6 s of CPU). */
function versionOfTypescript() {
  typescriptVersion ??= JSON.parse(
    fs.readFileSync(require.resolve('typescript/package.json'), 'utf8'),
  ).version;
  return typescriptVersion;
}

function transpile(source, filename) {
  typescript ??= require('typescript');
  const { options, errors } = typescript.convertCompilerOptionsFromJson(compilerOptions, root);
  if (errors.length > 0) throw new Error(`register-ts: bad compiler options: ${errors[0].messageText}`);
  return typescript.transpileModule(source, { fileName: filename, compilerOptions: options }).outputText;
}

// An entry: `// <key> <sha256 of body>\n<body>`.
function readEntry(file, key) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const newline = text.indexOf('\n');
  if (newline < 0) return undefined;
  const body = text.slice(newline + 1);
  return text.slice(0, newline) === `// ${key} ${sha256(body)}` ? body : undefined;
}

function writeEntry(file, key, body) {
  const temporary = `${file}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.mkdirSync(cacheFolder, { recursive: true });
    fs.writeFileSync(temporary, `// ${key} ${sha256(body)}\n${body}`);
    fs.renameSync(temporary, file);
  } catch {
    // A cache only: a child that cannot write it still runs.
    fs.rmSync(temporary, { force: true });
  }
}

/** The CommonJS output of `filename`'s TypeScript `source`, from the cache when it holds it. */
function compiled(source, filename) {
  const key = sha256(
    JSON.stringify([CACHE_VERSION, versionOfTypescript(), compilerOptions, filename, source]),
  );
  const file = path.join(cacheFolder, `${key}.js`);
  const cached = readEntry(file, key);
  if (cached !== undefined) return cached;
  const output = transpile(source, filename);
  writeEntry(file, key, output);
  return output;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(compiled(fs.readFileSync(filename, 'utf8'), filename), filename);
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const ferry = /^@ferry\/([a-z]+)(\/.+)?$/.exec(request);
  if (ferry && packages[ferry[1]]) {
    request = path.join(root, packages[ferry[1]], 'src', ferry[2] ?? 'index.ts');
  }
  try {
    return resolve.call(this, request, parent, ...rest);
  } catch (error) {
    if (!request.startsWith('.') || !request.endsWith('.js')) throw error;
    return resolve.call(this, `${request.slice(0, -3)}.ts`, parent, ...rest);
  }
};

module.exports = { cacheFolder, CACHE_VERSION };

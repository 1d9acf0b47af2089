// Lets a child `node` process run an example's TypeScript entry the way jest runs the tests:
// transpile-only (with the decorator metadata Nest needs), `@ferry/<package>[/<path>]` → its
// sources, and `./x.js` → `./x.ts` (the generated Prisma clients import their siblings so).
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');

const root = path.resolve(__dirname, '../..');
const packages = {
  core: 'packages/core',
  testing: 'packages/testing',
  nestjs: 'packages/nestjs',
  rabbitmq: 'transports/rabbitmq',
  kafka: 'transports/kafka',
  sqs: 'transports/sqs',
};

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
    },
  });
  module._compile(outputText, filename);
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

#!/usr/bin/env node
// `npm run bench`: runs bench/src/main.ts straight from TypeScript, resolved the way jest resolves
// it (jest.config.js): each @ferry/* workspace maps to its src/, and the generated Prisma client's
// `./x.js` imports map to the .ts files. Sources are transpiled with the root's TypeScript, without
// type checking (that is `tsc -p tsconfig.tests.json`), so the benchmarks need no build step.
'use strict';
// The repository's one TypeScript hook for child processes (test-support/register-ts.js): the same
// resolution, and its transpiled outputs cached on disk, so a relay child of relay-processes-xN
// does not transpile ferry again.
require('../test-support/register-ts.js');

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

#!/usr/bin/env node
// A package's `prepack`: a clean build of the package in the current directory. tsc -b never
// deletes the output of a source that was removed or moved, so dist/ and the build info are
// removed first and a tarball holds only what the current sources compile to.
'use strict';
const { rmSync } = require('node:fs');
const path = require('node:path');
const { runChild } = require('./runChild');

const dir = process.cwd();
rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
rmSync(path.join(dir, 'tsconfig.tsbuildinfo'), { force: true });
// runChild, not execFileSync: stopping `npm pack` stops the build too (review 75).
runChild(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], { cwd: dir }).then(
  ({ status, error }) => {
    if (error) process.stderr.write(`prepack: could not run tsc: ${error.message}\n`);
    process.exit(status);
  },
);

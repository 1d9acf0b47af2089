#!/usr/bin/env node
// `npm run demo` runs setup first, then this: the main demo, built from examples/demo.
'use strict';
const path = require('node:path');

require(path.resolve(__dirname, '../examples/demo/dist/src/main.js')).demoMain();

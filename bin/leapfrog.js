#!/usr/bin/env node
// The `leapfrog` command: a thin launcher for the bundled CLI (see engine/cli/).
require('../dist/cli.js');

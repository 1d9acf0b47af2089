// The one way scripts/ runs long work in a child process (jest, npm ci, tsc): so that stopping the
// script stops the work. A synchronous spawn (spawnSync / execFileSync) ignores the signals the
// script gets: a SIGTERM or SIGINT sent to the script (by npm, a CI runner, `kill <pid>`, a
// process manager) ended the script only, and its child went on, re-parented to init (review 75).
// Uses only Node's standard library: scripts/setup.js runs it before node_modules exists.
'use strict';
const { spawn } = require('node:child_process');
const { constants } = require('node:os');

/** The signals passed on to the child. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The exit status of a process ended by `signal`, as a shell reports it: 128 + its number. */
function signalStatus(signal) {
  return 128 + (constants.signals[signal] ?? 0);
}

/**
 * Runs `command` with `args` in its own process group and resolves, once it has ended, to
 * `{ status, signal, error, output }` (`status` is the exit code or 128 + the signal that ended it;
 * `error` set when it could not be started; `output` the child's stdout and stderr when
 * `options.stdio` is 'pipe').
 *
 * While it runs, a SIGINT, SIGTERM or SIGHUP this process gets is passed on to the child's whole
 * process group (jest's workers, npm's scripts), which then ends in its own way; a second one
 * SIGKILLs the group and exits this process at once with 128 + that signal. The group is the
 * child's own (`detached`) so that a Ctrl-C in a terminal reaches it once, through here, and not
 * twice. `options`: spawn's (`cwd`, `env`, `stdio`).
 */
function runChild(command, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options, detached: true });
    const chunks = [];
    child.stdout?.on('data', (chunk) => chunks.push(chunk));
    child.stderr?.on('data', (chunk) => chunks.push(chunk));
    let received = null;
    const toGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    };
    const onSignal = (signal) => {
      if (child.pid === undefined) return;
      if (received !== null) {
        toGroup('SIGKILL');
        process.exit(signalStatus(signal));
      }
      received = signal;
      toGroup(signal);
    };
    for (const signal of FORWARDED) process.on(signal, onSignal);
    let settled = false;
    const done = (result) => {
      if (settled) return;
      settled = true;
      for (const signal of FORWARDED) process.off(signal, onSignal);
      resolve({ ...result, output: chunks.length > 0 ? Buffer.concat(chunks) : undefined });
    };
    child.once('error', (error) => done({ status: 1, signal: null, error }));
    child.once('close', (code, signal) =>
      done({ status: code ?? signalStatus(signal), signal, error: undefined }),
    );
  });
}

module.exports = { runChild, signalStatus };

/**
 * The suites' wait-until is the one in @ferry/testing (packages/testing/src/wait.ts): polls a
 * probe until it yields a value (a throw counts as "not yet"), fails at a deadline with the last
 * answer. The harness keeps its name for it.
 */
export { waitUntil as waitFor, WaitTimeoutError, pause, type WaitOptions } from '@ferry/testing';

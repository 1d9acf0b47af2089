export { runCli } from './cli';
export type { CliIo } from './command';

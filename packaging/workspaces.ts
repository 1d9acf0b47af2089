import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');

/** The workspaces published to npm, by folder. */
export const PUBLISHED = [
  'packages/core',
  'packages/testing',
  'packages/cli',
  'packages/nestjs',
  'transports/rabbitmq',
  'transports/kafka',
  'transports/sqs',
] as const;

export interface PackageJson {
  name: string;
  version: string;
  description?: string;
  keywords?: string[];
  license?: string;
  repository?: { type: string; url: string; directory?: string };
  engines?: { node?: string };
  scripts?: Record<string, string>;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function packageJson(dir: string): PackageJson {
  return JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as PackageJson;
}

/** Where `name` is installed as Node resolves it from the workspace: its own node_modules, else the root's. */
export function installedPackage(
  dir: string,
  name: string,
): { dir: string; manifest: Record<string, unknown> } {
  const found = [path.join(ROOT, dir), ROOT]
    .map((base) => path.join(base, 'node_modules', name))
    .find((folder) => existsSync(path.join(folder, 'package.json')));
  if (!found) throw new Error(`${dir} depends on ${name}, which is not installed`);
  const manifest = JSON.parse(readFileSync(path.join(found, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return { dir: found, manifest };
}

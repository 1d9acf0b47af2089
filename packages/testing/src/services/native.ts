import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { FerryConfigError, FerryError } from '@ferry/core';
import type { FerryService } from './images';

export interface ServiceEndpoints {
  /** A PostgreSQL server URL (database `test`, user postgres); create databases on it. */
  readonly databaseUrl: string;
  readonly amqpUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly sqsEndpoint: string;
}

/** What scripts/services serves, overridable by the same variables ferry's own tests read. */
export function nativeEndpoints(env: NodeJS.ProcessEnv = process.env): ServiceEndpoints {
  return {
    databaseUrl: env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test',
    amqpUrl: env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    kafkaBrokers: (env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    sqsEndpoint: env.FERRY_SQS_ENDPOINT ?? 'http://127.0.0.1:9324',
  };
}

/** `scripts/services` of ferry's repository: FERRY_SERVICES_SCRIPT, else found above `start`. */
export function findServicesScript(start: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.FERRY_SERVICES_SCRIPT) return env.FERRY_SERVICES_SCRIPT;
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'scripts', 'services');
    if (existsSync(candidate)) return candidate;
    if (dir === path.dirname(dir)) {
      throw new FerryConfigError(
        'nativeScript',
        `no scripts/services above ${start}; set FERRY_SERVICES_SCRIPT (or nativeScript) to ferry's scripts/services, or make Docker reachable`,
      );
    }
  }
}

/**
 * `scripts/services up <services>`: reuses what is already listening, starts the rest from the
 * machine's installation. Never stops anything (other processes share these services).
 */
export function startNative(
  script: string,
  services: readonly FerryService[],
  timeoutMs: number,
): Promise<void> {
  const names = services.map((s) => (s === 'sqs' ? 'elasticmq' : s));
  return new Promise((resolve, reject) => {
    execFile(script, ['up', ...names], { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (!error) return resolve();
      reject(
        new FerryError('FERRY_TRANSPORT_ERROR', `${script} up failed: ${stderr || stdout || error.message}`, {
          cause: error,
        }),
      );
    });
  });
}

import type { SqlExecutor } from '../sql/executor';
import type { RenewalTiming } from '../lease/renewalLock';
import type { Redactor } from '../redact/redact';
import type { Logger } from '../observe/logger';
import { dbCall as outboxCall } from './errors';
import { claimBatch } from './sql/claimBatch';
import { completeBatch } from './sql/completeBatch';
import { endBackend } from '../sql/endBackend';
import { probeClaim } from './sql/probeClaim';
import { recoverLeases } from './sql/recoverLeases';
import { releaseAbandoned } from './sql/releaseAbandoned';
import { releaseClaims } from './sql/releaseClaims';
import { renewLease } from './sql/renewLease';
import { yieldClaims } from './sql/yieldClaims';

/** The transitions the relay loop runs; bound to an executor by relayStore(). */
export interface RelayStore {
  claim: (args: Parameters<typeof claimBatch>[1]) => ReturnType<typeof claimBatch>;
  complete: (
    token: string,
    completions: Parameters<typeof completeBatch>[2],
    onSent?: Parameters<typeof completeBatch>[3],
  ) => ReturnType<typeof completeBatch>;
  /**
   * `ids`: the rows claimed under `token` (renewal by primary key); without them, by token.
   * `signal`: the lease kit gave up on the renewal (sql/renewLease.ts).
   */
  renew: (
    token: string,
    lease: RenewalTiming,
    ids?: readonly string[],
    signal?: AbortSignal,
  ) => Promise<number>;
  recover: (args: Parameters<typeof recoverLeases>[1]) => ReturnType<typeof recoverLeases>;
  release: (token: string, ids: readonly string[]) => Promise<number>;
  /** Gives up, at close(), a claim whose publish outlasted shutdownTimeout (sql/yieldClaims.ts). */
  yieldClaims: (token: string, ids: readonly string[]) => Promise<number>;
  /** A half-open probe's claim from the destinations the broker did not refuse (sql/probeClaim.ts). */
  probe: (args: Parameters<typeof probeClaim>[1]) => ReturnType<typeof probeClaim>;
  /** Hands back the rows of claims the relay dropped (abandonedClaims.ts), counting nothing. */
  releaseAbandoned: (unpublished: readonly string[], published: readonly string[]) => Promise<number>;
  /** Ends the backend of a claim statement given up on; true once it is gone (sql/endBackend.ts). */
  endBackend: (pid: number, sentAgoMs: number, waitMs: number) => Promise<boolean>;
}

/**
 * Binds the transitions to `db`; database failures surface as FerryErrors redacted by `redact`
 * (an unclassified one logged to `log`, the relay's logger).
 */
export function relayStore(db: SqlExecutor, redact?: Redactor, log?: Logger): RelayStore {
  const dbCall = <T>(operation: string, work: () => Promise<T>): Promise<T> =>
    outboxCall(operation, work, redact, log);
  return {
    claim: (args) => dbCall('claim', () => claimBatch(db, args)),
    complete: (token, completions, onSent) =>
      dbCall('complete', () => completeBatch(db, token, completions, onSent)),
    renew: (token, lease, ids, signal) =>
      dbCall('renew lease', () => renewLease(db, token, lease, ids, signal)),
    recover: (args) => dbCall('recover leases', () => recoverLeases(db, args)),
    release: (token, ids) => dbCall('release claims', () => releaseClaims(db, token, ids)),
    yieldClaims: (token, ids) => dbCall('yield claims', () => yieldClaims(db, token, ids)),
    probe: (args) => dbCall('claim', () => probeClaim(db, args)),
    releaseAbandoned: (unpublished, published) =>
      dbCall('release abandoned claims', () => releaseAbandoned(db, unpublished, published)),
    endBackend: (pid, sentAgoMs, waitMs) =>
      dbCall('end backend', () => endBackend(db, pid, sentAgoMs, waitMs)),
  };
}

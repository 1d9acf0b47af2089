import type * as PromClient from 'prom-client';
import { optionalPeerError } from '../optionalPeer';

/** The parts of prom-client ferry uses. */
export type Prom = Pick<typeof PromClient, 'Registry' | 'Counter' | 'Gauge' | 'Histogram'>;

let loaded: Prom | null = null;

/**
 * prom-client, an optional peer dependency of @ferry/core that only `@ferry/core/metrics` loads
 * (when it is imported), so applications without metrics never need it.
 */
export function promClient(): Prom {
  if (loaded === null) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = require('prom-client') as Prom;
    } catch (error) {
      throw optionalPeerError(error, {
        peer: 'prom-client',
        option: '@ferry/core/metrics',
        reason: 'needs the optional peer dependency prom-client 15.x: npm install prom-client@^15.1.3',
      });
    }
  }
  return loaded;
}

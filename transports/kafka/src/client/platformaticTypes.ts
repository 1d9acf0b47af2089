import type * as PlatformaticModule from '@platformatic/kafka';
import type { RetryDelayGetter } from '@platformatic/kafka';

/** The @platformatic/kafka module's shape (loaded lazily by platformatic.ts). */
export type PlatformaticKafka = typeof PlatformaticModule;

/** Options every @platformatic/kafka client of one connection shares. */
export interface PlatformaticBase {
  readonly clientId: string;
  readonly bootstrapBrokers: string[];
  readonly connectTimeout: number;
  readonly requestTimeout: number;
  readonly timeout: number;
  readonly retryDelay: RetryDelayGetter;
}

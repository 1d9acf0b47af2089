import type { ResolvedConnectionOptions } from '../connectionOptions';
import { KafkajsDriver } from './kafkajs';
import { PlatformaticDriver } from './platformatic';
import type { KafkaClientDriver } from './types';

export type { KafkaClientName } from './types';

/** The client library a connection's `client` option names. */
export function createDriver(options: ResolvedConnectionOptions): KafkaClientDriver {
  return options.client === 'platformatic' ? new PlatformaticDriver(options) : new KafkajsDriver(options);
}

import type { KafkaClientName } from '../src';

/**
 * Every Kafka test file runs once per client: as itself on kafkajs (the default), and imported
 * by its twin under `platformatic/`, which first selects @platformatic/kafka here. Test modules
 * are loaded afresh for each test file, so the choice never leaks into another file.
 */
let selected: KafkaClientName = 'kafkajs';

export function useKafkaClient(client: KafkaClientName): void {
  selected = client;
}

/** The client `testConnection()` uses in this test file. */
export function kafkaClient(): KafkaClientName {
  return selected;
}

/**
 * The transport conformance suite run against the in-memory broker of @ferry/testing, so the
 * broker that applications' tests use behaves as RabbitMQ, Kafka and SQS do. Each case gets a
 * fresh broker; restartBroker ends the current broker's session (support/inMemoryConformance.ts).
 */
import { runTransportConformance } from '@ferry/testing/conformance';
import { inMemoryConformance } from './support/inMemoryConformance';

runTransportConformance(inMemoryConformance({ name: 'in-memory', timeoutMs: 10_000 }));

// Helpers for applications' own tests. The transport conformance suite registers jest tests
// when imported, so it lives apart: `@ferry/testing/conformance`.
export { InMemoryPublisher, type InMemoryPublisherOptions, type PublishDecision } from './inMemoryPublisher';
export {
  InMemoryBroker,
  type InMemoryDeadLetter,
  type InMemoryDelivery,
  type NackOptions,
  type Unacked,
} from './inMemoryBroker';
export { attachInMemoryConsumer, type InMemoryConsumer } from './inMemoryConsumer';
export type { InMemoryConsumerOptions } from './inMemoryConsumerOptions';
export {
  drainInbox,
  waitForInboxRecord,
  InboxDrainTimeoutError,
  InboxRecordWaitTimeoutError,
  type DrainInboxOptions,
  type DrainInboxResult,
  type WaitForInboxRecordOptions,
} from './inbox';
export {
  recreateDatabase,
  dropDatabase,
  findUp,
  type RecreateDatabaseOptions,
  type ServerDatabaseOptions,
} from './database';
export { waitUntil, pause, WaitTimeoutError, type WaitOptions } from './wait';
export {
  startFerryServices,
  chooseServicesMode,
  type FerryServices,
  type ServicesMode,
  type StartFerryServicesOptions,
} from './services/startFerryServices';
export {
  SERVICE_IMAGES,
  ALL_SERVICES,
  kafkaEnvironment,
  elasticMqConfig,
  type FerryService,
} from './services/images';
export { dockerReachable, dockerEndpoint } from './services/docker';
export type { ServiceEndpoints } from './services/native';

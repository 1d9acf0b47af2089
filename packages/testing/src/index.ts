// Helpers for applications' own tests. The transport conformance suite registers jest tests
// when imported, so it lives apart: `@ferry/testing/conformance`.
export { InMemoryPublisher, type InMemoryPublisherOptions, type PublishDecision } from './inMemoryPublisher';
export {
  drainInbox,
  waitForInboxRecord,
  InboxDrainTimeoutError,
  InboxRecordWaitTimeoutError,
  type DrainInboxOptions,
  type DrainInboxResult,
  type WaitForInboxRecordOptions,
} from './inbox';
export { recreateDatabase, dropDatabase, findUp, type RecreateDatabaseOptions } from './database';

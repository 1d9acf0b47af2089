export { OutboxModule } from './outbox.module';
export {
  OutboxEmitter,
  OutboxOperatorService,
  OutboxRelayService,
  OutboxTenantAdminService,
} from './outbox.services';
export type {
  OutboxModuleAsyncOptions,
  OutboxModuleOptions,
  OutboxRegistration,
  OutboxSettings,
} from './outbox.options';
export { InboxModule } from './inbox.module';
export {
  InboxAdminService,
  InboxPrivilegedAdminService,
  InboxService,
  type InboxServiceState,
} from './inbox.services';
export type {
  InboxModuleAsyncOptions,
  InboxModuleOptions,
  InboxRegistration,
  InboxSettings,
} from './inbox.options';
export { InboxHandler } from './inbox-handler.decorator';
export { REGISTRATION_KEYS, type FerryAsyncBase } from './async-options';
export { FerryHealthIndicator, fromNestLogger, type FerryHealthResult, type HealthProbe } from './health';

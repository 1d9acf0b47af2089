import type { InjectionToken, ModuleMetadata } from '@nestjs/common';
import type { InboxOptions, PrismaTransactionLike } from '@ferry/core';
import type { FerryAsyncBase } from './async-options';

/**
 * Options that may also come from a forRootAsync factory: core's InboxOptions without the
 * registration options (handlers, privilegedAdmin, global). Validated by core's
 * resolveInboxOptions at module init (FerryConfigError, FERRY_CONFIG_INVALID).
 */
export type InboxSettings<TTx = PrismaTransactionLike> = Omit<
  InboxOptions<TTx>,
  'handlers' | 'privilegedAdmin' | 'global'
>;

/** Registration options: fixed when the module is built (top level in forRootAsync). */
export interface InboxRegistration {
  /** Injection token of the application's Prisma client provider (e.g. PrismaService). */
  prisma: InjectionToken;
  /** Handler providers by consumer name; each has handle(payload, context) and optionally parse(). */
  handlers?: Readonly<Record<string, InjectionToken>>;
  /** Registers InboxPrivilegedAdminService (cross-tenant). Default false. */
  privilegedAdmin?: boolean;
  /** Tenant-less messages: 'reject' (default) or 'shared'. */
  global?: 'reject' | 'shared';
  /** Register the module globally. Default false. */
  isGlobal?: boolean;
}

export interface InboxModuleOptions<TTx = PrismaTransactionLike>
  extends InboxRegistration, InboxSettings<TTx> {
  /** Modules that export `prisma` and the handler providers' dependencies. */
  imports?: ModuleMetadata['imports'];
}

export interface InboxModuleAsyncOptions<TTx = PrismaTransactionLike>
  extends FerryAsyncBase<InboxSettings<TTx>>, InboxRegistration {}

export function inboxSettingsOf<TTx>(options: InboxModuleOptions<TTx>): InboxSettings<TTx> {
  const {
    prisma: _p,
    handlers: _h,
    privilegedAdmin: _pa,
    global: _g,
    isGlobal: _ig,
    imports: _i,
    ...settings
  } = options;
  return settings;
}

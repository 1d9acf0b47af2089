import type { InjectionToken } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { FerryConfigError, type InboxHandler as CoreHandler, type InboxHandlerContext } from '@ferry/core';
import { INBOX_HANDLER_METADATA } from './tokens';

type Handlers = Record<string, CoreHandler<unknown>>;

function add(handlers: Handlers, consumer: string, handler: CoreHandler<unknown>, origin: string): void {
  if (Object.prototype.hasOwnProperty.call(handlers, consumer)) {
    throw new FerryConfigError(`handlers.${consumer}`, `registered twice (again by ${origin})`);
  }
  handlers[consumer] = handler;
}

/** Methods decorated with @InboxHandler() on static (singleton) providers and controllers. */
export function discoverDecoratedHandlers(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
  into: Handlers,
): void {
  const seen = new Set<object>();
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const instance = wrapper.instance as Record<string, unknown> | null | undefined;
    if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) continue;
    const methods = scanner.getAllMethodNames(prototype);
    const decorated = methods.filter((name) =>
      reflector.get(INBOX_HANDLER_METADATA, instance[name] as never),
    );
    if (decorated.length === 0) continue;
    seen.add(instance);
    if (!wrapper.isDependencyTreeStatic()) {
      throw new FerryConfigError(
        `@InboxHandler on ${wrapper.name as string}`,
        'inbox handlers must live on singleton (default-scoped) providers',
      );
    }
    for (const name of decorated) {
      const consumer = reflector.get<string>(INBOX_HANDLER_METADATA, instance[name] as never);
      const method = instance[name] as (p: unknown, c: InboxHandlerContext<unknown>) => Promise<void>;
      add(
        into,
        consumer,
        (payload, context) => method.call(instance, payload, context),
        `${String(wrapper.name)}.${name}`,
      );
    }
  }
}

interface HandlerProvider {
  handle(payload: never, context: InboxHandlerContext<unknown>): Promise<void>;
  parse?(payload: Readonly<Record<string, unknown>>): unknown;
}

/** `handlers: { consumer: ProviderToken }`: each provider has handle(payload, context) and optionally parse(). */
export function resolveTokenHandlers(
  moduleRef: ModuleRef,
  tokens: Readonly<Record<string, InjectionToken>>,
  into: Handlers,
): void {
  for (const [consumer, token] of Object.entries(tokens)) {
    const instance = moduleRef.get<HandlerProvider>(token, { strict: false });
    if (!instance || typeof instance.handle !== 'function') {
      throw new FerryConfigError(
        `handlers.${consumer}`,
        'the provider must have a handle(payload, context) method',
      );
    }
    const handler: CoreHandler<unknown> = {
      handle: instance.handle.bind(instance),
      ...(typeof instance.parse === 'function' ? { parse: instance.parse.bind(instance) } : {}),
    };
    add(into, consumer, handler, `handlers.${consumer}`);
  }
}

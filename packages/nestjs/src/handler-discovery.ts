import type { InjectionToken } from '@nestjs/common';
import type { DiscoveryService, ModuleRef } from '@nestjs/core';
import { FerryConfigError, type InboxHandler as CoreHandler, type InboxHandlerContext } from '@ferry/core';
import { received } from '@ferry/core/transport';
import { inboxHandlerConsumers } from './inbox-handler.decorator';
import { isScopeError, nameOf } from './scope';

type Handlers = Record<string, CoreHandler<unknown>>;
type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];
/** A method or a class, as the discovery walks them. */
type Callable = (...args: never[]) => unknown;
type HandlerMethod = (payload: unknown, context: InboxHandlerContext<unknown>) => Promise<void>;

function add(handlers: Handlers, consumer: string, handler: CoreHandler<unknown>, origin: string): void {
  if (Object.prototype.hasOwnProperty.call(handlers, consumer)) {
    throw new FerryConfigError(`handlers.${consumer}`, `registered twice (again by ${origin})`);
  }
  handlers[consumer] = handler;
}

/**
 * Why Nest cannot hand over one constructed instance of `wrapper`, or null. Transient and
 * request-scoped (durable too) providers, and singletons depending on one, have none: the
 * instance a static lookup finds is a placeholder whose constructor never ran (injected
 * dependencies undefined), so a handler bound to it would complete receipts without its work.
 */
function scopeFault(wrapper: InstanceWrapper): string | null {
  if (wrapper.isTransient) return 'it is transient-scoped';
  if (!wrapper.isDependencyTreeStatic())
    return 'it is request-scoped or depends on a request-scoped provider';
  return null;
}

/** Each own method of `holder` (string and symbol names), skipping accessors and `skip`. */
function* ownMethods(holder: object, skip: ReadonlySet<PropertyKey>): Generator<[PropertyKey, Callable]> {
  for (const key of Reflect.ownKeys(holder)) {
    if (skip.has(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(holder, key);
    if (typeof descriptor?.value === 'function') yield [key, descriptor.value as Callable];
  }
}

/** A class's own properties that are not static methods. */
const NOT_STATIC_METHODS: ReadonlySet<PropertyKey> = new Set(['prototype', 'length', 'name']);
const NOT_METHODS: ReadonlySet<PropertyKey> = new Set(['constructor']);

/**
 * The decorated instance method names along `prototype`'s chain, each with its nearest decorated
 * definition (whose consumers count). An override that does not repeat the decorator keeps the
 * name decorated: the method called is the one the instance has (see instanceMethod).
 */
function decoratedInstanceMethods(prototype: object | null): [PropertyKey, Callable][] {
  const found = new Map<PropertyKey, Callable>();
  for (
    let at = prototype;
    at !== null && at !== Object.prototype;
    at = Object.getPrototypeOf(at) as object | null
  ) {
    for (const [key, method] of ownMethods(at, NOT_METHODS)) {
      if (found.has(key)) continue; // decorated nearer the instance
      if (inboxHandlerConsumers(method).length > 0) found.set(key, method);
    }
  }
  return [...found];
}

/**
 * What `instance` has under a decorated name at module init: the override, or an own property a
 * constructor set (`this.handle = trace(this.handle)`). Not a function: a FerryConfigError.
 */
function instanceMethod(instance: object, key: PropertyKey, origin: string): HandlerMethod {
  let value: unknown;
  try {
    value = (instance as Record<PropertyKey, unknown>)[key];
  } catch (error) {
    value = error;
  }
  if (typeof value !== 'function') {
    throw new FerryConfigError(
      `@InboxHandler on ${origin}`,
      `the instance's ${String(key)} must be a method, got ${received(value)}`,
    );
  }
  return value as HandlerMethod;
}

/** The decorated static methods along `type`'s chain of classes, each with the class defining it. */
function decoratedStaticMethods(type: Callable): [Callable, PropertyKey, Callable][] {
  const found: [Callable, PropertyKey, Callable][] = [];
  for (
    let holder: Callable | null = type;
    holder !== null && holder !== Function.prototype;
    holder = Object.getPrototypeOf(holder) as Callable | null
  ) {
    for (const [key, method] of ownMethods(holder, NOT_STATIC_METHODS)) {
      if (inboxHandlerConsumers(method).length > 0) found.push([holder, key, method]);
    }
  }
  return found;
}

/**
 * Methods decorated with @InboxHandler() on providers and controllers: instance methods of
 * singletons (on a scoped provider they fail module init), static methods of any (called on the
 * class that defines them). Every consumer of a method decorated more than once is registered.
 * A decorated instance method calls what the instance has under its name at init (an override).
 */
export function discoverDecoratedHandlers(discovery: DiscoveryService, into: Handlers): void {
  const seenInstances = new Set<object>();
  const seenStatics = new Set<Callable>();
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const instance: unknown = wrapper.instance;
    const isObject = typeof instance === 'object' && instance !== null;
    // The class: the instance's (a factory's or value's instance has its own), else the provider's.
    const type: unknown = isObject
      ? (instance as { constructor?: unknown }).constructor
      : wrapper.isFactory
        ? undefined
        : wrapper.metatype;
    if (typeof type === 'function') {
      for (const [holder, key, method] of decoratedStaticMethods(type as Callable)) {
        if (seenStatics.has(method)) continue; // a class provided more than once
        seenStatics.add(method);
        for (const consumer of inboxHandlerConsumers(method)) {
          const call = (payload: unknown, context: InboxHandlerContext<unknown>) =>
            (method as HandlerMethod).call(holder, payload, context);
          add(into, consumer, call, `${holder.name}.${String(key)}`);
        }
      }
    }
    if (!isObject || seenInstances.has(instance)) continue;
    seenInstances.add(instance);
    const methods = decoratedInstanceMethods(Object.getPrototypeOf(instance) as object | null);
    const fault = methods.length === 0 ? null : scopeFault(wrapper);
    for (const [key, method] of methods) {
      const origin = `${nameOf(type)}.${String(key)}`;
      if (fault !== null) {
        throw new FerryConfigError(
          `@InboxHandler on ${origin}`,
          `inbox handlers must live on singleton (default-scoped) providers, and ${fault}: Nest has no constructed instance of it to call`,
        );
      }
      const target = instanceMethod(instance, key, origin);
      for (const consumer of inboxHandlerConsumers(method)) {
        const call = (payload: unknown, context: InboxHandlerContext<unknown>) =>
          target.call(instance, payload, context);
        add(into, consumer, call, origin);
      }
    }
  }
}

interface HandlerProvider {
  handle(payload: never, context: InboxHandlerContext<unknown>): Promise<void>;
  parse?(payload: Readonly<Record<string, unknown>>): unknown;
}

/** The singleton `token` stands for, or a FerryConfigError naming `handlers.<consumer>`. */
function handlerProvider(moduleRef: ModuleRef, consumer: string, token: InjectionToken): unknown {
  try {
    return moduleRef.get<unknown>(token, { strict: false });
  } catch (error) {
    // Nest's InvalidClassScopeException (a scoped provider) or UnknownElementException (none).
    const scoped = isScopeError(error);
    throw new FerryConfigError(
      `handlers.${consumer}`,
      scoped
        ? `${nameOf(token)} is transient- or request-scoped (or depends on a request-scoped provider): inbox handlers must be singleton (default-scoped) providers Nest has one constructed instance of`
        : `no provider of ${nameOf(token)} in the application: provide it in one of its modules (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/** `handlers: { consumer: ProviderToken }`: each provider has handle(payload, context) and optionally parse(). */
export function resolveTokenHandlers(
  moduleRef: ModuleRef,
  tokens: Readonly<Record<string, InjectionToken>>,
  into: Handlers,
): void {
  for (const [consumer, token] of Object.entries(tokens)) {
    const instance = handlerProvider(moduleRef, consumer, token) as HandlerProvider | null | undefined;
    if (!instance || typeof instance.handle !== 'function') {
      throw new FerryConfigError(
        `handlers.${consumer}`,
        `the provider must have a handle(payload, context) method, got ${received(instance)}`,
      );
    }
    // A parse that is no function (a schema object under that name, a misspelling) would leave
    // payloads unchecked: refused, as the core refuses it in `handlers` given directly.
    if (instance.parse !== undefined && typeof instance.parse !== 'function') {
      throw new FerryConfigError(
        `handlers.${consumer}`,
        `the provider's parse must be a method parse(payload) when it has one, got ${received(instance.parse)}`,
      );
    }
    const handler: CoreHandler<unknown> = {
      handle: instance.handle.bind(instance),
      ...(typeof instance.parse === 'function' ? { parse: instance.parse.bind(instance) } : {}),
    };
    add(into, consumer, handler, `handlers.${consumer}`);
  }
}

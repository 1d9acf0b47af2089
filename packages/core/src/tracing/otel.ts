import type * as OtelApi from '@opentelemetry/api';

/** The parts of @opentelemetry/api ferry uses. */
export type Otel = Pick<
  typeof OtelApi,
  'trace' | 'context' | 'SpanKind' | 'SpanStatusCode' | 'ROOT_CONTEXT' | 'createTraceState'
>;

type Loader = () => unknown;

/** Inside a try block, so that bundlers read the package as optional (review 106); absent: null. */
const defaultLoader: Loader = () => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@opentelemetry/api');
  } catch {
    return null;
  }
};

let loader: Loader = defaultLoader;
let cached: Otel | null | undefined;

/**
 * @opentelemetry/api if the application installed it (an optional peer dependency), loaded on
 * first use; null when it is absent or unusable, and every span helper then does nothing.
 */
export function otel(): Otel | null {
  if (cached !== undefined) return cached;
  try {
    const api = loader() as Partial<Otel> | null;
    cached = api?.trace && api.context && api.SpanKind && api.SpanStatusCode ? (api as Otel) : null;
  } catch {
    cached = null;
  }
  return cached;
}

/** Tests only: replaces how the API is loaded (undefined restores `require`) and forgets the cached one. */
export function setOtelLoaderForTests(load: Loader | undefined): void {
  loader = load ?? defaultLoader;
  cached = undefined;
}

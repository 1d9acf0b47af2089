import { FERRY_HEADERS } from '@ferry/core';
import { setOwnProperty } from '@ferry/core/transport';
import type { ConsumedHeaders, RecordHeaders } from './client/types';

type ConsumedValue = ConsumedHeaders[string];

/**
 * The values of one consumed header, in order. Kafka lets a name repeat and lets a value be null
 * (the Java client's `headers.add(name, null)`); a null value counts as no value. Only bytes and
 * text are values: kafkajs groups repeated names by reading `headers[name]`, so a header named
 * `constructor` (or `toString`, `__proto__`) arrives as `[Object, value]`; the function is no
 * value of the record (sent on to a dead-letter topic, it made every send of it throw).
 */
export function headerValues(value: ConsumedValue): (Buffer | string)[] {
  const values: unknown[] = Array.isArray(value) ? value : [value];
  return values.filter((one): one is Buffer | string => Buffer.isBuffer(one) || typeof one === 'string');
}

/** The last value of a header, or undefined when it has none. */
export function lastHeaderValue(value: ConsumedValue): Buffer | string | undefined {
  const values = headerValues(value);
  return values[values.length - 1];
}

/**
 * A record's headers, given in order as name and value, grouped as both clients hand them over: a
 * name's one value, or every value of a name given more than once, in order (null kept). One pass,
 * a value list per name: building the object afresh (kafkajs spread it for every header) or
 * copying a name's values at each repeat made one record of many headers (a hostile producer's,
 * some 100 KB) take minutes, blocking the event loop past the session timeout at every fetch of
 * it (review 95). Own properties only (setOwnProperty): a name such as `constructor` or
 * `__proto__` is a header like any other.
 */
export function groupHeaders(entries: Iterable<readonly [string, Buffer | string | null]>): ConsumedHeaders {
  const grouped = new Map<string, (Buffer | string | null)[]>();
  for (const [name, value] of entries) {
    const values = grouped.get(name);
    if (values === undefined) grouped.set(name, [value]);
    else values.push(value);
  }
  const headers: ConsumedHeaders = {};
  for (const [name, values] of grouped)
    setOwnProperty(headers, name, values.length === 1 ? values[0]! : values);
  return headers;
}

/** The headers whose value ferry reads: one identity, tenant and type per record. */
const READ_HEADERS = [FERRY_HEADERS.messageId, FERRY_HEADERS.tenantId, FERRY_HEADERS.eventType];

/**
 * Why a record's ferry headers are ambiguous (one of them given more than once with different
 * values), or null. Taking any one of them would let a producer that adds a second tenant or id
 * header choose what ferry reads, and readers of the same record (Java's `lastHeader`, a proxy that
 * checks the first) disagree.
 */
export function ambiguousFerryHeader(headers: ConsumedHeaders | undefined): string | null {
  for (const name of READ_HEADERS) {
    const values = headerValues(headers?.[name]).map((value) => Buffer.from(value).toString('hex'));
    const distinct = new Set(values).size;
    if (distinct > 1)
      return `the ${name} header appears ${values.length} times with ${distinct} different values`;
  }
  return null;
}

/**
 * A consumed record's headers as a producer can send them again (to a dead-letter topic): values
 * that are null are left out, since kafkajs cannot encode them and a send would throw on them.
 */
export function producibleHeaders(headers: ConsumedHeaders | undefined): RecordHeaders {
  const out: RecordHeaders = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const values = headerValues(value);
    if (values.length === 0) continue;
    setOwnProperty(out, name, values.length === 1 ? values[0] : values);
  }
  return out;
}

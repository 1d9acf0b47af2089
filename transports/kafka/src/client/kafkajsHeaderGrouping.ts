import { groupHeaders } from '../recordHeaders';
import type { ConsumedHeaders } from './types';

/** A header as kafkajs's header decoder reads it. */
interface DecodedHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

type ArrayReader = (decoder: unknown) => unknown;

interface KafkajsDecoder {
  readVarIntArray(this: KafkajsDecoder, reader: ArrayReader): unknown[];
}

let installed = false;

/**
 * kafkajs groups a record's headers by name with `reduce((obj, h) => ({ ...obj, [h.key]: … }))`:
 * the object is copied for every header and a repeated name's values concatenated at each repeat,
 * so a record of 10,000 header names decodes in about 30 s, of 20,000 in minutes, the event loop
 * blocked (no heartbeat, no timer) past the session timeout at every fetch of it, and its
 * partition never committed (review 95). The header array kafkajs's record decoder reads is
 * handed back with a `reduce` of its own, which groups the headers in one pass (groupHeaders,
 * as @platformatic/kafka's records are grouped) into the same shape: a name's value, or its
 * values in order. Process-global, as ferry's codecs; installed once, when the first kafkajs
 * client of ferry is made.
 */
export function installKafkajsHeaderGrouping(): void {
  if (installed) return;
  installed = true;
  let Decoder: { prototype: KafkajsDecoder };
  let headerDecoder: ArrayReader;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    Decoder = require('kafkajs/src/protocol/decoder') as { prototype: KafkajsDecoder };
    headerDecoder = require('kafkajs/src/protocol/recordBatch/header/v0/decoder') as ArrayReader;
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch {
    // A kafkajs laid out otherwise than the 2.2.4 ferry depends on (a deduplicated or patched
    // install): its own grouping stays, slow on many headers but correct.
    return;
  }
  const own = Decoder.prototype?.readVarIntArray;
  if (typeof own !== 'function' || typeof headerDecoder !== 'function') return;
  Decoder.prototype.readVarIntArray = function readVarIntArray(reader) {
    const array = own.call(this, reader);
    if (reader !== headerDecoder) return array;
    const headers = array as DecodedHeader[];
    const grouped = (): ConsumedHeaders =>
      groupHeaders(headers.map(({ key, value }) => [key, value] as const));
    Object.defineProperty(headers, 'reduce', { value: grouped });
    return headers;
  };
}

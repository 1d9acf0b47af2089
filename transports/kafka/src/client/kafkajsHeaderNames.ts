import type { ConsumedRecord } from './types';

/**
 * kafkajs decodes a record's header names with `toString('utf8')`: a name that is not valid UTF-8
 * arrives with U+FFFD in place of its bytes, so names `ff 61` and `fe 61` both read `\ufffda` and
 * one value replaces the other. The bytes are gone by then, so such a name is left out, as
 * @platformatic/kafka's records leave out a name that is not UTF-8 (platformaticConsumer): the
 * inbox never stores a name decoded lossily. (A name holding U+FFFD as sent is left out too: it
 * cannot be told apart.) The records are kafkajs's own, fresh per fetch; their headers are
 * edited in place so the batch's records keep their identity (commitThrough compares them).
 */
export function dropLossyHeaderNames(records: readonly ConsumedRecord[]): void {
  for (const record of records) {
    const headers = record.headers as Record<string, unknown> | undefined;
    if (headers === undefined) continue;
    for (const name of Object.keys(headers)) {
      if (name.includes('\uFFFD')) delete headers[name];
    }
  }
}
